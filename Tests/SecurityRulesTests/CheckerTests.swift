import Testing
@testable import SecurityRules

struct CheckerTests {
    static func issues(_ body: String, version: Int = 2) -> [RulesIssue] {
        Ruleset.compile(rules(body, version: version)).issues
    }

    /// (rules body, line, column, severity, message)
    static let cases: [(String, Int, Int, RulesIssue.Severity, String)] = [
        ("    match /a/{b} { allow read: if nope(); }", 4, 35, .warning, "Invalid function name: nope."),
        ("    function f(x) { return x; }\n    match /a/{b} { allow read: if f(); }", 5, 35, .warning, "Incorrect number of arguments supplied to function: f."),
        ("    function f() { return g(); }\n    function g() { return f(); }\n    match /a/{b} { allow read: if f(); }", 4, 14, .error, "Recursive call is not allowed."),
        ("    function f() { return f(); }\n    match /a/{b} { allow read: if f(); }", 4, 14, .error, "Recursive call is not allowed."),
        ("    function unused() { return true; }\n    match /a/{b} { allow read; }", 4, 14, .warning, "Unused function: unused."),
        ("    match /a/{b} { allow read: if c == 1; }", 4, 35, .warning, "Invalid variable name: c."),
        ("    match /a/{b} { allow fetch: if true; }", 4, 26, .warning, "Invalid method name: fetch."),
        ("    match /a/{b} { allow read: if b is text; }", 4, 35, .error, "An unsupported type identifier was used with the 'is' operator. Received text. Expected one of bool,bytes,constraint,duration,float,int,latlng,list,vector,set,number,map,string,timestamp,path,map_diff"),
        // A method call's issue is at the method's name, a duplicate path variable's at the name (as the emulator's).
        ("    match /a/{b} { allow read: if math.nope(1); }", 4, 40, .warning, "Invalid function name: math.nope."),
        ("    match /a/{b} { allow read: if math.abs(1, 2) == 1; }", 4, 40, .warning, "Incorrect number of arguments supplied to function: math.abs."),
        ("    match /a/{b} { allow read: if b.size(1) == 1; }", 4, 37, .warning, "Incorrect number of arguments supplied to function: size."),
        ("    match /a/{b}/{b} { allow read; }", 4, 19, .error, "Variable b already exists in the PathTemplate."),
        ("    match /a/{b}/{b=**} { allow read; }", 4, 19, .error, "Variable b already exists in the PathTemplate."),
        ("    match /{a=**}/x/{b=**} { allow read; }", 4, 11, .error, "Invalid glob match expression. Only one glob match is permitted in a match declaration path."),
        ("    function f(a, a) { return a; }\n    match /x/{y} { allow read: if f(1, 2); }", 4, 19, .error, "Variable a is already defined."),
        ("    function f() { return true; }\n    function f() { return false; }\n    match /x/{y} { allow read: if f(); }", 5, 14, .error, "Function f is already defined."),
        ("    match /a/{b} { allow read: if b.sizee() == 1; }", 4, 37, .warning, "Invalid function name: sizee."),
    ]

    @Test(arguments: cases)
    func diagnoses(_ body: String, _ line: Int, _ column: Int, _ severity: RulesIssue.Severity, _ message: String) {
        let found = CheckerTests.issues(body)
        let match = found.first { $0.description == message }
        #expect(match != nil, "got \(found)")
        #expect(match?.line == line)
        #expect(match?.column == column)
        #expect(match?.severity == severity)
    }

    /// A user function called with the wrong number of arguments loads with a warning and fails when
    /// a request runs the call, with the emulator's words naming its parameters.
    @Test(arguments: [
        ("function f(a) { return a; }", "f(1, 2)", "Incorrect number of arguments. Received: 2. Expected: f(a). for 'get' @ L5"),
        ("function f(a, b) { return a && b; }", "f(true)", "Incorrect number of arguments. Received: 1. Expected: f(a, b). for 'get' @ L5"),
        ("function f() { return true; }", "f(1)", "Incorrect number of arguments. Received: 1. Expected: f(). for 'get' @ L5"),
    ])
    func wrongArgumentCountFailsAtRunTime(_ function: String, _ call: String, _ denial: String) {
        let r = compiled(rules("    \(function)\n    match /a/{id} { allow get: if \(call); }"))
        let decision = r.evaluate(Req.make(.get, "a/x"), lookup: MapLookup())
        #expect(!decision.allowed)
        #expect(decision.message.contains(denial), "got \(decision.message)")
        #expect(!decision.message.contains("Function not found"))
    }

    @Test func v1RecursiveWildcardMustBeLast() {
        let found = CheckerTests.issues("    match /{a=**}/x { allow read; }", version: 1)
        #expect(found.contains { $0.severity == .error && $0.description.hasPrefix("Invalid glob match expression. Glob matches are permitted as the last segment") })
        #expect(CheckerTests.issues("    match /{a=**}/x { allow read; }", version: 2).isEmpty)
    }

    @Test func warningsDoNotBlockCompilation() {
        let (r, issues) = Ruleset.compile(rules("    function unused() { return 1; }\n    match /a/{b} { allow read; }"))
        #expect(r != nil)
        #expect(issues.count == 1)
        #expect(r?.warnings.count == 1)
    }

    @Test func allowOutsideMatchIsAnError() {
        let (r, issues) = Ruleset.compile("service cloud.firestore {\n  allow read;\n}")
        #expect(r == nil)
        #expect(issues.first?.description == "An allow statement must be inside a match block.")
        #expect(issues.first?.line == 2 && issues.first?.column == 3)
    }

    /// As on the emulator: another service loads with a warning, each allow method in it is an unknown
    /// one, and it grants nothing, alone or beside a cloud.firestore block.
    @Test func otherServiceLoadsAndGrantsNothing() {
        let (r, issues) = Ruleset.compile("service firebase.database {\n  match /databases/{d}/documents { match /a/{b} { allow read; } }\n}")
        #expect(issues.map { "L\($0.line):\($0.column) \($0.severity) \($0.description)" } == [
            "L1:9 warning Invalid service name: firebase.database.", "L2:57 warning Invalid method name: read.",
        ])
        #expect(r?.service == .firestore)
        #expect(r?.evaluate(Req.make(.get, "a/x"), lookup: MapLookup()).allowed == false)
        let both = compiled("""
            service foo.bar { match /databases/{d}/documents { match /a/{b} { allow read; } } }
            service cloud.firestore { match /databases/{d}/documents { match /c/{b} { allow read; } } }
            """)
        #expect(both.service == .firestore)
        #expect(!both.evaluate(Req.make(.get, "a/x"), lookup: MapLookup()).allowed)
        #expect(both.evaluate(Req.make(.get, "c/x"), lookup: MapLookup()).allowed)
    }

    @Test func storageRulesCompileAsStorage() {
        let (r, issues) = Ruleset.compile("service firebase.storage { match /b/{bucket}/o { allow read; } }")
        #expect(issues.isEmpty)
        #expect(r?.service == .storage)
        #expect(Ruleset.compile("service cloud.firestore { match /databases/{d}/documents { allow read; } }").ruleset?.service == .firestore)
    }

    /// As the official emulator: a file may declare both known services, each once
    /// (`Duplicate service name declaration.` at the second declaration's name).
    @Test func bothServicesLoadAndOneServiceTwiceIsAnError() {
        let (r, issues) = Ruleset.compile("service cloud.firestore { }\nservice firebase.storage { }")
        #expect(issues.isEmpty)
        #expect(r?.service == .firestore)
        #expect(Ruleset.compile("service firebase.storage { }\nservice cloud.firestore { }").ruleset?.service == .firestore)
        #expect(Ruleset.compile("service firebase.storage { }\nservice cloud.firestore { }", service: .storage).ruleset?.service == .storage)
        for name in ["cloud.firestore", "firebase.storage"] {
            let (twice, found) = Ruleset.compile("service \(name) { }\nservice \(name) { }")
            #expect(twice == nil)
            #expect(found.map { "L\($0.line):\($0.column) \($0.description)" } == ["L2:9 Duplicate service name declaration."])
        }
    }

    /// Issues in the block of the service not loaded are still reported, errors refusing the file.
    @Test func theOtherServicesBlockIsChecked() {
        let fs = "service cloud.firestore { match /databases/{d}/documents { allow read: if true; } }\n"
        let warned = Ruleset.compile(fs + "service firebase.storage { match /b/{bucket}/o { allow read: if nope(); } }")
        #expect(warned.ruleset != nil)
        #expect(warned.issues.map(\.description) == ["Invalid function name: nope."])
        #expect(Ruleset.compile(fs + "service firebase.storage { match /b/{bucket}/o { allow read: if nope(; } }").ruleset == nil)
    }

    @Test func emptySourceIsAnError() {
        let (r, issues) = Ruleset.compile("")
        #expect(r == nil)
        #expect(issues.map { "L\($0.line):\($0.column) \($0.description)" } == ["L0:0 Rules content empty. Compilation aborted."])
        #expect(Ruleset.compile("// only a comment").issues.first?.description == "No 'service cloud.firestore { … }' block found.")
    }

    @Test func functionsSeeTheirDeclaringScope() {
        // `story` is bound by the block that declares f, so f can read it even when called from a nested block.
        let source = rules("""
            match /stories/{story} {
              function isStory(s) { return story == s; }
              match /comments/{comment} {
                allow read: if isStory('s1') && later(comment);
                function later(c) { return c == 'c1'; }
              }
            }
        """)
        let r = compiled(source)
        #expect(r.evaluate(Req.make(.get, "stories/s1/comments/c1"), lookup: MapLookup()).allowed)
        #expect(!r.evaluate(Req.make(.get, "stories/s2/comments/c1"), lookup: MapLookup()).allowed)
        // A function declared at the database level cannot see a variable bound only in a nested block.
        let outer = rules("""
            function f() { return story == 's1'; }
            match /stories/{story} { allow read: if f(); }
        """)
        let (o, issues) = Ruleset.compile(outer)
        #expect(issues.contains { $0.description == "Invalid variable name: story." })
        let d = o!.evaluate(Req.make(.get, "stories/s1"), lookup: MapLookup())
        #expect(!d.allowed)
        #expect(d.message.hasPrefix("Variable not found: story. for 'get' @ L"))
    }

    @Test func parametersShadowPathVariablesAndLetsAreSequential() {
        let source = rules("""
            match /x/{portal} {
              function f(portal) { let a = portal + '1'; let b = a + '2'; return b; }
              allow read: if f('p') == 'p12' && portal == 'real';
            }
        """)
        #expect(compiled(source).evaluate(Req.make(.get, "x/real"), lookup: MapLookup()).allowed)
    }

    @Test func callDepthIsLimitedToTwenty() {
        var fns = ""
        for i in 0..<25 { fns += "    function f\(i)() { return f\(i + 1)(); }\n" }
        fns += "    function f25() { return true; }\n"
        let deep = compiled(rules(fns + "    match /x/{y} { allow read: if f0(); allow write: if f6(); }"))
        let d = deep.evaluate(Req.make(.get, "x/1"), lookup: MapLookup())
        #expect(!d.allowed)
        #expect(d.message.hasPrefix("Maximum function call depth (20) exceeded. for 'get'"))
        // 20 nested calls (f6 … f25) are fine.
        #expect(deep.evaluate(Req.make(.create, "x/1"), lookup: MapLookup()).allowed)
    }
}
