import Testing
@testable import SecurityRules

/// Rules functions at their edges as the official Cloud Firestore emulator answers them (faith37 and
/// faith38, recorded in Tests/CompatTests/firestore/differential/rulesrtcases.py): each value or error here is
/// the emulator's.
struct EmulatorEdgeTests {
    static let values: [(String, Bool)] = [
        // An int against a float is ordered as a double, as `==` compares them.
        ("9007199254740993 > 9007199254740992.0", false), ("9007199254740993 <= 9007199254740992.0", true),
        ("1 < 1.5", true), ("2.5 >= 2", true),
        // Strings order by UTF-16 code units: a surrogate pair before U+E000–U+FFFF.
        ("'\\ue000' < '\\U0001F600'", false), ("'\\U0001F600' < '\\uffff'", true), ("'a' < '\\u00e9'", true),
        ("'\\U0001F600' <= '\\U0001F600'", true),
        // Sets and map diffs: NaN equals NaN, numbers numerically at every depth, 0.0 is -0.0.
        ("[0.0 / 0.0, 0.0 / 0.0].toSet().size() == 1", true), ("(0.0 / 0.0) in [0.0 / 0.0].toSet()", true),
        ("[[1], [1.0]].toSet().size() == 1", true), ("[0.0, -0.0].toSet().size() == 1", true),
        ("(0.0 / 0.0) in [0.0 / 0.0]", false), ("[0.0 / 0.0] == [0.0 / 0.0]", false),
        ("{'a': {'b': [1]}}.diff({'a': {'b': [1.0]}}).unchangedKeys() == ['a'].toSet()", true),
        ("{'a': 0.0 / 0.0}.diff({'a': 0.0 / 0.0}).affectedKeys().size() == 0", true),
        // `==` of lists and maps tells 0.0 from -0.0; `in` and `hasAny` do not.
        ("[0.0] == [-0.0]", false), ("{'a': 0.0} == {'a': -0.0}", false), ("[[0.0]] == [[-0.0]]", false),
        ("-0.0 in [0.0]", true), ("[0.0].hasAny([-0.0])", true), ("0.0 == -0.0", true),
        // replace
        ("'ab'.replace('', '-') == '-a-b-'", true), ("''.replace('', 'x') == 'x'", true),
        ("'ab'.replace('a', '$0$0') == 'aab'", true), ("'ab'.replace('a', '\\\\$') == '$b'", true),
        // Java's parseDouble: hexadecimal with a binary exponent
        ("float('0x1p3') == 8.0", true), ("float('-0X10P0d') == -16.0", true),
        // A leap second is the next minute's first.
        ("timestamp.value('2016-12-31T23:59:60Z') == timestamp.date(2017, 1, 1)", true),
        ("timestamp.value('2016-06-01T12:00:60Z') == timestamp.value('2016-06-01T12:01:00Z')", true),
        // Path templates: an unbound variable equals nothing; bind() converts as string() does.
        ("path('/a/{x}') == path('/a/{x}')", false), ("path('/a/{x}') != path('/a/{x}')", true),
        ("string(path('/a/{x}')) == '/a/'", true),
        ("path('/a/{x}').bind({'x': 'v'}) == path('/a/v')", true), ("path('/a/{x}').bind({'x': 1}) == path('/a/1')", true),
        ("path('/a/{x}/{y}').bind({'x': 'v'}) == path('/a/v/{y}')", false),
        ("path('/a/{x}').bind({'x': 'v'})[1] == 'v'", true),
        // A segment that only reads `{x}` is no template (an interpolated string, a document id).
        ("(/databases/d/documents/a/$('{x}'))[4] == '{x}'", true),
        // A bound path keeps its variables by name: the segments a slice keeps, at a literal's places.
        ("path('/a/{x}').bind({'x': 'v'}).x == 'v'", true), ("path('/a/{x}').bind({'x': 'v'})['x'] == 'v'", true),
        ("path('/a/{x}/{y}').bind({'x': 'v', 'y': 'w'}).y == 'w'", true), ("path('/a/{x}').bind({'x': 1}).x == '1'", true),
        ("path('/a/{x}').bind({'x': null}).x == 'null'", true), ("path('/a/{x}').bind({'x': 'a/b'})[1] == 'a/b'", true),
        ("path('/a/{x}/{y}').bind({'x': 'v'}) == path('/a/v')", true), ("path('/a/{x}').bind({}) == path('/a')", true),
        ("path('/a/{x}').bind({'x': 'v'})[1:2].x == 'v'", true), ("path('/a/{x}').bind({'x': 'v'})[0:1] == path('/a')", true),
        ("(/q/$(path('/a/{x}').bind({'x': 'v'}))).x == 'v'", true), ("(/q/$(path('/a/{x}').bind({'x': 'v'})))[2] == 'v'", true),
        ("{'p': path('/a/{x}').bind({'x': 'v'})}.p.x == 'v'", true),
        // `{x}` in a path literal: the template `path('/a/{x}')` is.
        ("(/a/{x}).bind({'x': 'v'}) == path('/a/v')", true), ("(/a/{ x }/b/{y}).bind({'y': 'w'}) == /a/b/w", true),
        ("(/a/{x}/$('d')).bind({'x': 'v'}).x == 'v'", true), ("string(/a/{x}) == '/a/'", true),
        ("(/a/{x}) == path('/a/{x}')", false), ("path('a/b') == path('/a/b')", true),
        ("path('/a/{ x }').bind({'x': 'v'}) == path('/a/v')", true), ("path('/a/{$x}').bind({'$x': 'v'}) == path('/a/v')", true),
        ("path('/a/b{x}')[1] == 'b{x}'", true),
        // replace expands as RE2/J's appendReplacement.
        ("'ab'.replace('(?P<first>a)(b)', '${first}') == 'a'", true), ("'ab'.replace('(?<f>a)(b)', '$2${f}') == 'ba'", true),
        ("'b'.replace('(?P<n>a)?b', '[${n}]') == '[null]'", true), ("'b'.replace('(a)?b', '[$1]') == '[]'", true),
        ("'ab'.replace('a', '$') == '$b'", true), ("'ab'.replace('(?<first>a)', '$first') == '$firstb'", true),
        ("'ab'.replace('a', '$$') == '$$b'", true), ("'ab'.replace('(?P<a>a)', '$\\\\{a}') == '${a}b'", true),
        ("'abc'.replace('(a)(b)(c)', '$12') == 'a2'", true),
        // A brace that closes no repetition is itself, as RE2 reads it.
        ("'a{,2}'.matches('a{,2}')", true), ("'aaa'.matches('a{,2}')", false), ("'a}'.matches('a}')", true),
        ("'a}b'.split('}') == ['a', 'b']", true), ("'ab'.replace('(a)', '$10') == 'a0b'", true),
        ("'ab'.replace('a', '\\\\') == '\\\\b'", true), ("'ab'.replace('x', '$2${nope}') == 'ab'", true),
        // faith39. int() is Java's Long.parseLong: any script's decimal digits (BMP).
        ("int('\\u0661\\u0662') == 12", true), ("int('\\uff11\\uff12') == 12", true), ("int('-\\u0661') == -1", true),
        ("int('-9223372036854775808') == -9223372036854775808", true),
        // debug() takes any number of values and answers the first.
        ("debug(1, 2) == 1", true), ("debug(1, 2, 3) == 1", true),
        // `\p{…}` outside a class (ICU runs it): its braces are no literal ones.
        ("'a'.matches('\\\\p{L}')", true), ("'A'.split('\\\\p{Lu}') == ['']", true), ("'1'.matches('\\\\P{L}')", true),
        ("'\\u03b1'.matches('\\\\p{Greek}')", true),
        // RE2's counts up to 1000; groups nested up to 20 deep.
        ("'x'.matches('x{0,1000}')", true), ("'x'.matches('((((((((((((((((((((x))))))))))))))))))))')", true),
        // A null slice bound is an absent one.
        ("[1, 2][null:] == [1, 2]", true), ("[1, 2, 3][:null] == [1, 2, 3]", true), ("'ab'[null:1] == 'a'", true),
        ("[1, 2][null:null] == [1, 2]", true),
        // `{x=**}` in a path literal binds a path, spliced in; `{x=*}` binds a segment as `{x}` does.
        ("(/a/{x=**}).bind({'x': path('b/c')}) == /a/b/c", true), ("(/a/{x=**}).bind({'x': path('b/c')}).x == path('b/c')", true),
        ("(/a/{x=**}).bind({'x': path('b/c')})[2] == 'c'", true), ("string(/a/{x=**}) == '/a/'", true),
        ("(/a/{x=**}) != null", true), ("(/a/{x=**}) == (/a/{x=**})", false), ("(/a/{ x = ** }/b).bind({}) == /a/b", true),
        ("(/{x=**}/{y=**}).bind({'x': path('a'), 'y': path('b')}) == /a/b", true),
        ("(/a/{x=*}).bind({'x': 'v'}) == /a/v", true), ("string(/a/{x=*}) == '/a/'", true),
        ("path('/a/{x=**}').bind({'x': path('b')}) == path('/a/b')", true),
        // Durations up to protobuf's ±315,576,000,000 s; duration.time without a nanosecond product.
        ("duration.value(315576000000, 's') > duration.value(0, 's')", true),
        ("duration.value(87660000, 'h') == duration.value(315576000000, 's')", true),
        ("duration.time(87660000, 0, 0, 0) == duration.value(87660000, 'h')", true),
        ("duration.time(3000000, 0, 0, 0) == duration.value(3000000, 'h')", true),
        ("duration.time(0, 0, 1, -1).nanos() == 999999999", true), ("duration.time(0, 0, -1, 1).nanos() == -999999999", true),
        ("duration.value(9223372036854775807, 'ns').seconds() == 9223372036", true),
        ("duration.abs(duration.value(-315576000000, 's') - duration.value(1, 'ns')) > duration.value(0, 's')", true),
        ("timestamp.value('9999-12-31T23:59:59Z') - timestamp.value('0001-01-01T00:00:00Z') == duration.value(315537897599, 's')", true),
    ]

    @Test(arguments: values)
    func evaluates(_ expression: String, _ expected: Bool) {
        ExpressionTests.expectValue(expression, .bool(expected))
    }

    static let errors: [(String, String)] = [
        ("[1, 2].removeAll([1].toSet())", "Unsupported operation error. Received: list.removeAll(set). Expected: list.removeAll(list)."),
        ("'ab'.replace('a', '$2')", "Invalid argument provided to call. Function: [replace], Argument: [n > number of groups: 2]."),
        ("float('0x1.8')", "Type conversion error. Argument: [0x1.8], From type: [string], To type: [float]."),
        ("path('/a/{x}').x", "Variable x is not bound in path template."),
        ("path('/a/{x}')[1]", "Variable x is not bound in path template."),
        ("path('/a/{x}')[0:1]", "Variable x is not bound in path template."),
        ("exists(path('/databases/d/documents/c/{u}'))", "Variable u is not bound in path template."),
        ("path('/a/b').id", "Property id is undefined on object."),
        ("path('/a/b')['id']", "Property id is undefined on object."),
        ("path('/a/b').size()", "Function not found error: Name: [size]."),
        ("path('/a/{x}').bind({'x': ['p']})", "Unsupported operation error. Received: string(list). Expected: string(int), string(float), string(null), string(string), string(bool), string(path)."),
        ("path('/a/{x}/{y}').bind({'x': 'v'}).y", "Property y is undefined on object."),
        ("path('/a/{x}').bind({'x': 'v'}).bind({'x': 'w'})", "Variable x is already bound."),
        ("path('/a/{x}/{y}').bind({'x': 'v'}).bind({'y': 'w'})", "Variable(s) y do not exist in the path template."),
        ("path('/a/{x}').bind({'x': 'v'}).bind({}).x", "Property x is undefined on object."),
        ("path('/a/{x}').bind({'x': 'v'})[0:1].x", "Property x is undefined on object."),
        ("path('/a/{x}').bind({'x': ''})", "Cannot bind empty value to path template variable x."),
        ("path('/a/{x}/{x}').bind({'x': 'v'})", "Variable x already exists in the PathTemplate."),
        ("path(path('/a/b'))", "Unsupported operation error. Received: path(path). Expected: path(string)."),
        ("(/a/{x}).x", "Variable x is not bound in path template."),
        // path() parses a template: no empty string, no empty segment (faith38).
        ("path('')", "Empty Path Template is not allowed."),
        ("path('/')", "Invalid Path Template /. Empty segment is not allowed."),
        ("path('/a//b')", "Invalid Path Template /a//b. Empty segment is not allowed."),
        ("path('/a/b/')", "Invalid Path Template /a/b/. Empty segment is not allowed."),
        ("path('/a/{x}b')", "Invalid Path Template /a/{x}b. The capture segment is not closed."),
        ("path('/a/{x-y}')", "Invalid Path Template /a/{x-y}. [Identifier [x-y] should start with letter, dollar sign, or underscore and should not start with digit and must not contain spaces."),
        ("path('/a/{a b}')", "Invalid Path Template /a/{a b}. [Identifier [a b] should start with letter, dollar sign, or underscore and should not start with digit and must not contain spaces."),
        ("path('/{x}/{x}')", "Variable x already exists in the PathTemplate."),
        // A set's union, intersection and difference take a set only (faith38).
        ("[1, 2].toSet().union([3])", "Unsupported operation error. Received: set.union(list). Expected: set.union(set)."),
        ("[1, 2].toSet().intersection([2])", "Unsupported operation error. Received: set.intersection(list). Expected: set.intersection(set)."),
        ("[1, 2].toSet().difference([2])", "Unsupported operation error. Received: set.difference(list). Expected: set.difference(set)."),
        ("[1].toSet().union(null)", "Unsupported operation error. Received: set.union(null). Expected: set.union(set)."),
        ("'ab'.replace('(?<first>a)(b)', '${nope}')", "Invalid argument provided to call. Function: [replace], Argument: [group 'nope' not found]."),
        ("'ab'.replace('(a)(b)', '${1}')", "Invalid argument provided to call. Function: [replace], Argument: [group '1' not found]."),
        ("'ab'.replace('a', '${')", "Invalid argument provided to call. Function: [replace], Argument: [named capture group is missing trailing '}']."),

        // faith39. A list's hasAll/hasAny/hasOnly take a list only (a set's take either).
        ("[1].hasAny([1].toSet())", "Unsupported operation error. Received: list.hasAny(set). Expected: list.hasAny(list)."),
        ("[1, 2].hasAll([1].toSet())", "Unsupported operation error. Received: list.hasAll(set). Expected: list.hasAll(list)."),
        ("[1].hasOnly([1, 2].toSet())", "Unsupported operation error. Received: list.hasOnly(set). Expected: list.hasOnly(list)."),
        ("{'a': 1}.keys().hasAny(['a'].toSet())", "Unsupported operation error. Received: list.hasAny(set). Expected: list.hasAny(list)."),
        ("[1, 2]['a':]", "Unsupported operation error. Received: list[string:null]. Expected: list[null:null], list[null:int], list[int:null], list[int:int]."),
        ("'ab'[true:1]", "Unsupported operation error. Received: string[bool:int]. Expected: string[null:null], string[null:int], string[int:null], string[int:int]."),
        ("(/a/{x=**}).bind({'x': 'v'})", "Type error. Received: [string] Expected: [path]."),
        ("(/a/{x=**}).bind({'x': 1})", "Type error. Received: [int] Expected: [path]."),
        ("(/a/{x=**})[0]", "Variable x is not bound in path template."),
        ("(/a/{x=**}).x", "Variable x is not bound in path template."),
        ("exists(/databases/d/documents/a/{x=**})", "Variable x is not bound in path template."),
        ("duration.value(315576000001, 's')", "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."),
        ("duration.value(-315576000001, 's')", "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."),
        ("duration.value(9223372036854775807, 's')", "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."),
        ("duration.value(9223372036854775807, 'ms')", "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."),
        ("duration.value(87660001, 'h')", "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."),
        ("duration.value(315576000000, 's') + duration.value(1, 's')", "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."),
        ("duration.value(-315576000000, 's') - duration.value(1, 's')", "Duration is not valid. Seconds must be in range [-315,576,000,000, +315,576,000,000]. Nanos must be in range [-999,999,999, +999,999,999]. Nanos must have the same sign as seconds."),
        ("duration.time(87660001, 0, 0, 0)", "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."),
        ("duration.time(-87660001, 0, 0, 0)", "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."),
        ("int('\\U0001D7CF')", "Type conversion error. Argument: [\u{1D7CF}], From type: [string], To type: [int]."),
        ("int('+')", "Type conversion error. Argument: [+], From type: [string], To type: [int]."),
        ("debug()", "Service call error. Function: [debug], Argument: []."),
        // `in` a map takes a string key (so `!(1 in m)` cannot allow); `[]` only on lists, strings,
        // paths and maps; a conversion of null names its signatures.
        ("1 in {'a': 1}", "Unsupported operation error. Received: map.in(int). Expected: map.in(string)."),
        ("null in {'a': 1}", "Unsupported operation error. Received: map.in(null). Expected: map.in(string)."),
        ("b'abc'[0]", "Function not found error: Name: [[]]."), ("[1].toSet()[0]", "Function not found error: Name: [[]]."),
        ("1[0]", "Function not found error: Name: [[]]."), ("request.time[0]", "Function not found error: Name: [[]]."),
        ("[1][null]", "Unsupported operation error. Received: list[null]. Expected: list[int]."),
        ("int(null)", "Unsupported operation error. Received: int(null). Expected: int(int), int(float), int(string)."),
        ("float(null)", "Unsupported operation error. Received: float(null). Expected: float(int), float(float), float(string)."),
        ("path(null)", "Unsupported operation error. Received: path(null). Expected: path(string)."),
        ("'x'.matches('x{0,1001}')", "Invalid regular expression pattern. Pattern: x{0,1001}."),
        ("'x'.matches('x{1001}')", "Invalid regular expression pattern. Pattern: x{1001}."),
        ("'x'.split('(((((((((((((((((((((x)))))))))))))))))))))')", "Regular expression too many nested groupings. Maximum allowed nested groupings: 20 Pattern: (((((((((((((((((((((x)))))))))))))))))))))."),
        ("'x'.matches('(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:x)))))))))))))))))))))')", "Regular expression too many nested groupings. Maximum allowed nested groupings: 20 Pattern: (?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:(?:x)))))))))))))))))))))."),
        // Milliseconds near Int64.min trapped (faith39's crash).
        ("timestamp.value(-9223372036854775808)", "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."),
        ("timestamp.value(-9223372036854775807)", "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."),
        ("timestamp.value(9223372036854775807)", "Timestamp is not valid. Seconds must be in range [-62,135,596,800, +253,402,300,799]. Nanos must be in range [0, +999,999,999]."),
    ]

    @Test(arguments: errors)
    func fails(_ expression: String, _ message: String) {
        ExpressionTests.expectError(expression, message)
    }

    /// A list's proofs compare in the query's order, not the rules': Firestore returns a string
    /// filter's matches by UTF-8 bytes, so `name < '😀'` does not prove `name < '\u{FFFF}'` (U+FFFF
    /// sorts before U+1F600 there), though the rules order them the other way.
    @Test func listProofsKeepTheQueryOrder() {
        let c = RulesConstraint(filters: [.init(.less, .string("\u{1F600}"))])
        #expect(throws: EvalError.self) { try Operators.apply(.less, .constraint(c), .string("\u{FFFF}")) }
        let d = RulesConstraint(filters: [.init(.less, .int(9_007_199_254_740_993))])
        #expect(throws: EvalError.self) { try Operators.apply(.less, .constraint(d), .float(9_007_199_254_740_992.0)) }
    }
}
