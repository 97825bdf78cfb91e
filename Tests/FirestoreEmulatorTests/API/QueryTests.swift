import Foundation
import HearthCore
import Testing
@testable import FirestoreEmulator

/// runQuery with every operator, composite and unary filters, ordering rules, cursors, offset,
/// limit, collection groups; runAggregationQuery; index use.
@Suite struct QueryTests {
    static func cities() throws -> TestHarness {
        let h = try TestHarness()
        h.put("cities/SF", ["name": str("San Francisco"), "state": str("CA"), "pop": int(860_000), "capital": bool(false),
                            "regions": arr([str("west_coast"), str("norcal")]), "rank": dbl(3.5)])
        h.put("cities/LA", ["name": str("Los Angeles"), "state": str("CA"), "pop": int(3_900_000), "capital": bool(false),
                            "regions": arr([str("west_coast"), str("socal")]), "rank": int(1)])
        h.put("cities/DC", ["name": str("Washington"), "state": str("DC"), "pop": int(680_000), "capital": bool(true),
                            "regions": arr([str("east_coast")])])
        h.put("cities/TOK", ["name": str("Tokyo"), "state": nullV, "country": str("Japan"), "pop": int(9_000_000),
                             "capital": bool(true), "regions": arr([str("kanto"), str("honshu")]), "rank": .object(["doubleValue": .string("NaN")])])
        h.put("cities/BJ", ["name": str("Beijing"), "country": str("China"), "pop": int(21_500_000), "capital": bool(true),
                            "regions": arr([str("jingjinji"), str("hebei")])])
        return h
    }

    static func ref(_ h: TestHarness, _ path: String) -> JSON { .object(["referenceValue": .string(h.root + "/" + path)]) }

    @Test func everyOperator() throws {
        let h = try Self.cities()
        let cases: [(String, JSON, [String])] = [
            ("<", ff("pop", "LESS_THAN", int(1_000_000)), ["DC", "SF"]),
            ("<=", ff("pop", "LESS_THAN_OR_EQUAL", int(860_000)), ["DC", "SF"]),
            (">", ff("pop", "GREATER_THAN", int(3_900_000)), ["TOK", "BJ"]),
            (">=", ff("pop", "GREATER_THAN_OR_EQUAL", int(3_900_000)), ["LA", "TOK", "BJ"]),
            ("==", ff("state", "EQUAL", str("CA")), ["LA", "SF"]),
            ("== double on int", ff("pop", "EQUAL", dbl(860_000)), ["SF"]),
            ("!=", ff("state", "NOT_EQUAL", str("CA")), ["DC"]),
            ("== bool", ff("capital", "EQUAL", bool(true)), ["BJ", "DC", "TOK"]),
            ("array-contains", ff("regions", "ARRAY_CONTAINS", str("west_coast")), ["LA", "SF"]),
            ("array-contains-any", ff("regions", "ARRAY_CONTAINS_ANY", arr([str("norcal"), str("kanto")])), ["SF", "TOK"]),
            ("in", ff("state", "IN", arr([str("CA"), str("DC")])), ["DC", "LA", "SF"]),
            ("not-in", ff("state", "NOT_IN", arr([str("CA")])), ["DC"]),
            ("IS_NULL", uf("state", "IS_NULL"), ["TOK"]),
            ("IS_NAN", uf("rank", "IS_NAN"), ["TOK"]),
            ("IS_NOT_NULL", uf("state", "IS_NOT_NULL"), ["LA", "SF", "DC"]),
            ("IS_NOT_NAN", uf("rank", "IS_NOT_NAN"), ["LA", "SF"]),
            ("type class", ff("pop", "GREATER_THAN", str("a")), []),
            ("string range", composite("AND", [ff("name", "GREATER_THAN_OR_EQUAL", str("L")), ff("name", "LESS_THAN", str("T"))]), ["LA", "SF"]),
            ("AND", composite("AND", [ff("state", "EQUAL", str("CA")), ff("pop", "GREATER_THAN", int(1_000_000))]), ["LA"]),
            ("OR", composite("OR", [ff("state", "EQUAL", str("DC")), ff("capital", "EQUAL", bool(true))]), ["BJ", "DC", "TOK"]),
            ("OR of AND", composite("OR", [composite("AND", [ff("state", "EQUAL", str("CA")), ff("pop", "LESS_THAN", int(1_000_000))]),
                                           ff("country", "EQUAL", str("Japan"))]), ["SF", "TOK"]),
            ("__name__ ==", ff("__name__", "EQUAL", Self.ref(h, "cities/SF")), ["SF"]),
            ("__name__ in", ff("__name__", "IN", arr([Self.ref(h, "cities/LA"), Self.ref(h, "cities/DC"), Self.ref(h, "other/DC")])), ["DC", "LA"]),
            ("__name__ >", ff("__name__", "GREATER_THAN", Self.ref(h, "cities/LA")), ["SF", "TOK"]),
            ("two inequality fields", composite("AND", [ff("pop", "GREATER_THAN", int(100)), ff("rank", "GREATER_THAN", int(0))]), ["SF", "LA"]),
            ("numeric enum op", .object(["fieldFilter": .object(["field": .object(["fieldPath": .string("state")]), "op": .int(5), "value": str("DC")])]), ["DC"]),
        ]
        for (label, filter, expected) in cases {
            let r = h.query(sq("cities", where: filter))
            #expect(r.status == 200, "\(label): \(r.json)")
            #expect(r.ids == expected, "\(label)")
        }
    }

    /// NaN and null are found only by IS_NAN / IS_NULL: as operands (and a stored NaN in ranges)
    /// they match nothing, as Firestore and its emulator answer.
    @Test func nanAndNullMatchOnlyTheirUnaryFilters() throws {
        let h = try TestHarness()
        let nan: JSON = .object(["doubleValue": .string("NaN")])
        h.put("v/nan", ["v": nan])
        h.put("v/null", ["v": nullV])
        h.put("v/one", ["v": int(1)])
        h.put("v/list", ["v": arr([nullV, nan])])
        let cases: [(String, JSON, [String])] = [
            ("== NaN", ff("v", "EQUAL", nan), []),
            ("== null", ff("v", "EQUAL", nullV), []),
            ("!= null", ff("v", "NOT_EQUAL", nullV), []),
            ("!= NaN keeps NaN", ff("v", "NOT_EQUAL", nan), ["list", "nan", "one"]),
            ("< 2 skips a stored NaN", ff("v", "LESS_THAN", int(2)), ["one"]),
            ("<= NaN", ff("v", "LESS_THAN_OR_EQUAL", nan), []),
            ("in [null, NaN, 1]", ff("v", "IN", arr([nullV, nan, int(1)])), ["one"]),
            ("not-in [NaN]", ff("v", "NOT_IN", arr([nan])), ["list", "nan", "one"]),
            ("array-contains null", ff("v", "ARRAY_CONTAINS", nullV), []),
            ("array-contains-any [NaN, null]", ff("v", "ARRAY_CONTAINS_ANY", arr([nan, nullV])), []),
            ("IS_NAN", uf("v", "IS_NAN"), ["nan"]),
            ("IS_NULL", uf("v", "IS_NULL"), ["null"]),
        ]
        for (label, filter, expected) in cases {
            let r = h.query(sq("v", where: filter))
            #expect(r.status == 200, "\(label): \(r.json)")
            #expect(r.ids.sorted() == expected, "\(label)")
        }
    }

    /// The stream's last element carries `done`; a new transaction is its own first element.
    @Test func streamShape() throws {
        let h = try Self.cities()
        let plain = h.query(sq("cities", limit: 2)).json.arrayValue ?? []
        #expect(plain.count == 2 && plain[0]["done"] == nil && plain[1]["done"] == .bool(true))
        let r = h.call("POST", h.api(":runQuery"), .object(["structuredQuery": sq("nothing"), "newTransaction": .object([:])]))
        let items = r.json.arrayValue ?? []
        #expect(items.count == 2)
        #expect(items.first.map { Array($0.objectValue?.keys ?? []) } == ["transaction"])
        #expect(items.last?["done"] == .bool(true) && items.last?["readTime"] != nil)
    }

    @Test func orderingCursorsOffsetLimit() throws {
        let h = try Self.cities()
        let cases: [(String, JSON, [String])] = [
            ("order desc limit", sq("cities", orderBy: [order("pop", "DESCENDING")], limit: 2), ["BJ", "TOK"]),
            ("offset", sq("cities", orderBy: [order("pop")], limit: 2, offset: 1), ["SF", "LA"]),
            ("startAt", sq("cities", orderBy: [order("pop")], startAt: .object(["values": .array([int(860_000)]), "before": .bool(true)])), ["SF", "LA", "TOK", "BJ"]),
            ("startAfter", sq("cities", orderBy: [order("pop")], startAt: .object(["values": .array([int(860_000)])])), ["LA", "TOK", "BJ"]),
            ("endAt", sq("cities", orderBy: [order("pop")], endAt: .object(["values": .array([int(3_900_000)])])), ["DC", "SF", "LA"]),
            ("endBefore", sq("cities", orderBy: [order("pop")], endAt: .object(["values": .array([int(3_900_000)]), "before": .bool(true)])), ["DC", "SF"]),
            // Cursor values pair with the orderBy as sent (the SDKs send `__name__` explicitly).
            ("startAfter name cursor", sq("cities", orderBy: [order("pop"), order("__name__")], startAt: .object(["values": .array([int(860_000), Self.ref(h, "cities/SF")])])), ["LA", "TOK", "BJ"]),
            ("startAt name, same value", sq("cities", orderBy: [order("capital"), order("__name__")],
                                             startAt: .object(["values": .array([bool(true), Self.ref(h, "cities/DC")]), "before": .bool(true)])), ["DC", "TOK"]),
            // limitToLast(2) of orderBy(pop) with endAt(9M), as the SDKs send it: directions and cursors flipped.
            ("limitToLast", sq("cities", orderBy: [order("pop", "DESCENDING")], limit: 2, startAt: .object(["values": .array([int(9_000_000)]), "before": .bool(true)])), ["TOK", "LA"]),
            ("order by string", sq("cities", orderBy: [order("name")]), ["BJ", "LA", "SF", "TOK", "DC"]),
            ("order by two fields", sq("cities", orderBy: [order("capital", "DESCENDING"), order("pop")]), ["DC", "TOK", "BJ", "SF", "LA"]),
            ("inequality implies order", sq("cities", where: ff("pop", "GREATER_THAN", int(0)), limit: 1), ["DC"]),
            ("implicit order follows last direction", sq("cities", where: ff("capital", "EQUAL", bool(true)), orderBy: [order("capital", "DESCENDING")]), ["TOK", "DC", "BJ"]),
            ("limit 0", sq("cities", limit: 0), []),
            ("order on missing field excludes", sq("cities", orderBy: [order("country")]), ["BJ", "TOK"]),
            ("equality + order on other field", sq("cities", where: ff("capital", "EQUAL", bool(true)), orderBy: [order("pop", "DESCENDING")]), ["BJ", "TOK", "DC"]),
            ("OR + order + limit", sq("cities", where: composite("OR", [ff("state", "EQUAL", str("CA")), ff("country", "EQUAL", str("China"))]),
                                       orderBy: [order("pop")], limit: 2), ["SF", "LA"]),
        ]
        for (label, q, expected) in cases {
            let r = h.query(q)
            #expect(r.status == 200, "\(label): \(r.json)")
            #expect(r.ids == expected, "\(label)")
        }
        let skipped = h.query(sq("cities", orderBy: [order("pop")], limit: 2, offset: 1)).json
        #expect(skipped[0]?["skippedResults"] == .int(1))
        let allSkipped = h.query(sq("cities", offset: 10)).json
        #expect(allSkipped.arrayValue?.count == 1)
        #expect(allSkipped[0]?["skippedResults"] == .int(5))
        #expect(allSkipped[0]?["document"] == nil && allSkipped[0]?["readTime"] != nil)
    }

    @Test func selectProjectsFields() throws {
        let h = try Self.cities()
        let r = h.query(sq("cities", where: ff("state", "EQUAL", str("DC")), select: ["name", "nope"]))
        #expect(r.json[0]?["document"]?["fields"] == .object(["name": str("Washington")]))
        let names = h.query(sq("cities", select: ["__name__"]))
        #expect(names.json[0]?["document"]?["fields"] == nil)
        #expect(names.ids.count == 5)
    }

    @Test func collectionGroupsUnderRootAndADocument() throws {
        let h = try TestHarness()
        h.put("cities/SF/landmarks/GG", ["type": str("bridge")])
        h.put("cities/LA/landmarks/GP", ["type": str("park")])
        h.put("cities/TOK/landmarks/NM", ["type": str("museum")])
        h.put("landmarks/X", ["type": str("bridge")])
        h.put("countries/jp/cities/TOK2/landmarks/Y", ["type": str("bridge")])
        h.put("cities/SF/other/Z", ["type": str("bridge")])
        #expect(h.query(sq("landmarks", allDescendants: true, where: ff("type", "EQUAL", str("bridge")))).ids == ["GG", "Y", "X"])
        #expect(h.query(sq("landmarks", allDescendants: true)).ids == ["GP", "GG", "NM", "Y", "X"])
        #expect(h.query(sq("landmarks", allDescendants: true), parent: "/cities/SF").ids == ["GG"])
        #expect(h.query(sq("landmarks", allDescendants: true, orderBy: [order("type", "DESCENDING")]), parent: "/cities").status == 400)
        #expect(h.query(sq("landmarks", allDescendants: true, where: ff("type", "EQUAL", str("bridge"))), parent: "/countries/jp").ids == ["Y"])
        #expect(h.query(sq("landmarks"), parent: "/cities/SF").ids == ["GG"])
        #expect(h.query(sq("landmarks")).ids == ["X"])
        // A kind-less descendant query (what recursive deletes send).
        let all = h.call("POST", h.api("/cities/SF:runQuery"), .object(["structuredQuery": .object(["from": .array([.object(["allDescendants": .bool(true)])])])]))
        #expect((all.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue?.split(separator: "/").last.map(String.init) } == ["GG", "Z"])
    }

    @Test func aggregations() throws {
        let h = try Self.cities()
        let r = h.call("POST", h.api(":runAggregationQuery"), .object(["structuredAggregationQuery": .object([
            "structuredQuery": sq("cities", where: ff("capital", "EQUAL", bool(false))),
            "aggregations": .array([
                .object(["alias": .string("n"), "count": .object([:])]),
                .object(["alias": .string("total"), "sum": .object(["field": .object(["fieldPath": .string("pop")])])]),
                .object(["alias": .string("mean"), "avg": .object(["field": .object(["fieldPath": .string("rank")])])]),
                .object(["count": .object(["upTo": .string("1")])]),
            ]),
        ])]))
        #expect(r.status == 200, "\(r.json)")
        let f = r.json[0]?["result"]?["aggregateFields"]
        #expect(f?["n"] == int(2))
        #expect(f?["total"] == int(4_760_000))
        #expect(f?["mean"] == dbl(2.25))
        #expect(f?["field_1"] == int(1))  // the first unnamed one (faith36: numbered among the unnamed)
        // With a field no document has, every aggregation of the request sees no documents:
        // aggregations over fields only count documents that have all of them (Firestore's docs).
        let none = h.call("POST", h.api(":runAggregationQuery"), .object(["structuredAggregationQuery": .object([
            "structuredQuery": sq("cities", where: ff("capital", "EQUAL", bool(false))),
            "aggregations": .array([
                .object(["alias": .string("n"), "count": .object([:])]),
                .object(["alias": .string("none"), "avg": .object(["field": .object(["fieldPath": .string("missing")])])]),
            ]),
        ])]))
        #expect(none.json[0]?["result"]?["aggregateFields"]?["none"] == nullV)
        #expect(none.json[0]?["result"]?["aggregateFields"]?["n"] == int(0))
        #expect(r.json[0]?["readTime"] != nil)
        let sumDouble = h.call("POST", h.api(":runAggregationQuery"), .object(["structuredAggregationQuery": .object([
            "structuredQuery": sq("cities"),
            "aggregations": .array([.object(["alias": .string("s"), "sum": .object(["field": .object(["fieldPath": .string("rank")])])])]),
        ])]))
        #expect(sumDouble.json[0]?["result"]?["aggregateFields"]?["s"] == .object(["doubleValue": .string("NaN")]))
        let empty = h.call("POST", h.api(":runAggregationQuery"), .object(["structuredAggregationQuery": .object([
            "structuredQuery": sq("nothing"), "aggregations": .array([.object(["alias": .string("c"), "count": .object([:])])]),
        ])]))
        #expect(empty.json[0]?["result"]?["aggregateFields"]?["c"] == int(0))
    }

    /// `__name__ in` naming a document twice matches it once, as `in` over a field's values does
    /// (it was read once per mention: two results, a count of 2, a limit filled by the repeat).
    @Test func nameInWithADocumentTwiceMatchesItOnce() throws {
        let h = try Self.cities()
        let twice = ff("__name__", "IN", arr([Self.ref(h, "cities/SF"), Self.ref(h, "cities/SF"), Self.ref(h, "cities/LA")]))
        #expect(h.query(sq("cities", where: twice)).ids == ["LA", "SF"])
        #expect(h.query(sq("cities", where: twice, limit: 2)).ids == ["LA", "SF"])
        let count = h.call("POST", h.api(":runAggregationQuery"), .object(["structuredAggregationQuery": .object([
            "structuredQuery": sq("cities", where: twice), "aggregations": .array([.object(["alias": .string("c"), "count": .object([:])])]),
        ])]))
        #expect(count.json[0]?["result"]?["aggregateFields"]?["c"] == int(2), "\(count.json)")
    }

    /// An aggregation's alias is a property name of the result: `__.*__` and names over 1,500
    /// bytes are refused in the official emulator's words (faith31).
    @Test func aggregationAliasesAreFieldNames() throws {
        let h = try Self.cities()
        func aggregate(_ alias: String) -> (Int, String?) {
            let r = h.call("POST", h.api(":runAggregationQuery"), .object(["structuredAggregationQuery": .object([
                "structuredQuery": sq("cities"), "aggregations": .array([.object(["alias": .string(alias), "count": .object([:])])]),
            ])]))
            return (r.status, r.json["error"]?["message"]?.stringValue)
        }
        #expect(aggregate("__a__") == (400, "The property.name \"__a__\" is reserved."))
        #expect(aggregate("__name__") == (400, "The property.name \"__name__\" is reserved."))
        #expect(aggregate(String(repeating: "a", count: 1501)) == (400, "The property.name is longer than 1500 bytes."))
        #expect(aggregate(String(repeating: "a", count: 1500)).0 == 200)
        #expect(aggregate("__a").0 == 200)
        #expect(aggregate("a.b").0 == 200)
    }

    @Test func invalidQueriesAreRejected() throws {
        let h = try Self.cities()
        let cases: [(String, JSON, String)] = [
            ("too many cursor values", sq("cities", orderBy: [order("pop")], startAt: .object(["values": .array([int(1), int(2), int(3)])])), "Cursor has too many values."),
            ("cursor past the explicit order", sq("cities", where: ff("pop", "GREATER_THAN", int(0)), startAt: .object(["values": .array([int(1)])])), "Cursor has too many values."),
            ("order after key", sq("cities", orderBy: [order("__name__"), order("pop")]), "order by clause cannot contain more fields after the key"),
            ("empty in", sq("cities", where: ff("state", "IN", arr([]))), "'IN' requires an non-empty ArrayValue."),
            ("in not array", sq("cities", where: ff("state", "IN", str("CA"))), "'IN' requires an ArrayValue."),
            ("31 in values", sq("cities", where: ff("state", "IN", arr((0..<31).map { int($0) }))), "'IN' supports up to 30 comparison values."),
            ("11 not-in values", sq("cities", where: ff("state", "NOT_IN", arr((0..<11).map { int($0) }))), "'NOT_IN' supports up to 10"),
            ("two array-contains", sq("cities", where: composite("AND", [ff("t", "ARRAY_CONTAINS", int(1)), ff("t", "ARRAY_CONTAINS", int(2))])),
             "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
            ("long operand", sq("cities", where: ff("name", "EQUAL", str(String(repeating: "x", count: 1501)))), "too large to be used in a query"),
            // An operand's storage size: a string's bytes + 1, a map's keys + 1 and values (faith29).
            ("1,500-byte string", sq("cities", where: ff("name", "EQUAL", str(String(repeating: "x", count: 1500)))),
             "value for name is too large to be used in a query"),
            ("map operand", sq("cities", where: ff("m", "EQUAL", .object(["mapValue": .object(["fields": .object(["k": str(String(repeating: "x", count: 1498))])])]))),
             "value for m is too large to be used in a query"),
            ("array-contains operand", sq("cities", where: ff("t", "ARRAY_CONTAINS", str(String(repeating: "x", count: 1500)))),
             "value for t[*] is too large to be used in a query"),
            ("inequality after the key", sq("cities", where: ff("pop", "GREATER_THAN", int(0)), orderBy: [order("__name__")]),
             "order by clause cannot contain more fields after the key"),
            ("kind-less field filter", .object(["from": .array([.object(["allDescendants": .bool(true)])]), "where": ff("pop", "EQUAL", int(1))]),
             "kind is required for filter: pop"),
            ("key string", sq("cities", where: ff("__name__", "EQUAL", str("SF"))), "__key__ filter value must be a Key"),
            // A document of another database: the official emulator's words (faith31).
            ("key in another database", sq("cities", where: ff("__name__", "IN", arr([.object(["referenceValue": .string("projects/\(h.project)/databases/other/documents/cities/SF")])]))),
             "The request was for database 'projects/\(h.project)/databases/(default)' but was attempting to access database 'projects/\(h.project)/databases/other'"),
            ("two not-in", sq("cities", where: composite("AND", [ff("a", "NOT_IN", arr([int(1)])), ff("b", "NOT_IN", arr([int(1)]))])), "Only a single 'NOT_EQUAL', 'NOT_IN'"),
            ("bad op", sq("cities", where: ff("a", "ALMOST", int(1))), "op"),
            ("bad path", sq("cities", where: ff("a..b", "EQUAL", int(1))), #"Invalid property path "a..b""#),
            ("unknown member", .object(["from": .array([.object(["collectionId": .string("cities")])]), "wat": .bool(true)]), "Unknown name \"wat\""),
            ("two from", .object(["from": .array([.object(["collectionId": .string("a")]), .object(["collectionId": .string("b")])])]),
             "StructuredQuery.from cannot have more than one collection selector."),
            ("negative limit", sq("cities", limit: -1), "limit is negative"),
            ("cursor key not ref", sq("cities", orderBy: [order("__name__")], startAt: .object(["values": .array([str("SF")])])),
             "Cursor __key__ value is not a document reference."),
            ("too many disjunctions", sq("cities", where: composite("AND", [ff("a", "IN", arr((0..<10).map { int($0) })), ff("b", "IN", arr((0..<10).map { int($0) }))])),
             "Too many disjunctions after normalization. Result had 100 disjunctions which is more than the maximum of 30"),
            ("two array-contains-any", sq("cities", where: composite("AND", [ff("t", "ARRAY_CONTAINS_ANY", arr([int(1)])), ff("u", "ARRAY_CONTAINS_ANY", arr([int(2)]))])),
             "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
            ("array-contains and array-contains-any", sq("cities", where: composite("AND", [ff("t", "ARRAY_CONTAINS", int(1)), ff("u", "ARRAY_CONTAINS_ANY", arr([int(2)]))])),
             "A maximum of 1 'ARRAY_CONTAINS' filter is allowed per disjunction."),
            ("not-in with in", sq("cities", where: composite("AND", [ff("a", "IN", arr([int(1)])), ff("b", "NOT_IN", arr([int(1)]))])),
             "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
            ("not-in with or", sq("cities", where: composite("AND", [ff("b", "NOT_IN", arr([int(1)])), composite("OR", [ff("a", "EQUAL", int(1)), ff("a", "EQUAL", int(2))])])),
             "'NOT_IN' cannot be used in the same query with 'IN', 'ARRAY_CONTAINS_ANY' or 'OR'."),
        ]
        for (label, q, fragment) in cases {
            let r = h.query(q)
            #expect(r.status == 400, "\(label): \(r.json)")
            #expect(r.json["error"]?["message"]?.stringValue?.contains(fragment) == true, "\(label): \(r.json)")
        }
    }

    /// At most 100 filters + explicit orderings + ancestor, and at most 10 distinct inequality
    /// fields, in the official emulator's words (faith36): a list operator's distinct values are
    /// filters each, a filter repeated in one composite is one (`== 0` and `== 0.0` are two), an
    /// OR's branches add up, an inequality's implicit order is not counted, `__name__` is an
    /// inequality field (`__key__`).
    @Test func queriesAreBoundedInSize() throws {
        let h = try Self.cities()
        func eqs(_ n: Int, _ prefix: String = "f") -> [JSON] { (0..<n).map { ff("\(prefix)\($0)", "EQUAL", int(Int64($0))) } }
        func message(_ q: JSON, parent: String = "") -> String? {
            let r = h.query(q, parent: parent)
            return r.status == 200 ? nil : r.json["error"]?["message"]?.stringValue
        }
        func tooMany(_ filters: Int, _ orders: Int, ancestor: Bool = false) -> String {
            "The query may not have more than 100 filters + sort orders + ancestor total. Currently there are \(filters) filters, "
                + "\(orders) sort orders, and \(ancestor ? "one" : "no") ancestor filter."
        }
        #expect(message(sq("cities", where: composite("AND", eqs(100)))) == nil)
        #expect(message(sq("cities", where: composite("AND", eqs(101)))) == tooMany(101, 0))
        #expect(message(sq("cities", where: composite("AND", eqs(100)), orderBy: [order("pop")])) == tooMany(100, 1))
        #expect(message(sq("cities", orderBy: (0..<101).map { order("f\($0)") })) == tooMany(0, 101))
        #expect(message(sq("cities", where: composite("AND", eqs(99) + [ff("pop", "GREATER_THAN", int(0))]))) == nil)
        #expect(message(sq("x", where: composite("AND", eqs(100))), parent: "/cities/SF") == tooMany(100, 0, ancestor: true))
        #expect(message(sq("cities", where: composite("AND", eqs(99) + [ff("n", "IN", arr([int(1), int(1)]))]))) == nil)
        #expect(message(sq("cities", where: composite("AND", eqs(99) + [ff("n", "IN", arr([int(1), dbl(1)]))]))) == tooMany(101, 0))
        #expect(message(sq("cities", where: composite("AND", eqs(99) + [ff("n", "NOT_IN", arr([int(1), int(2)]))]))) == tooMany(101, 0))
        #expect(message(sq("cities", where: composite("AND", eqs(100) + [ff("f0", "EQUAL", int(0))]))) == nil)
        #expect(message(sq("cities", where: composite("AND", eqs(100) + [ff("f0", "EQUAL", dbl(0))]))) == tooMany(101, 0))
        #expect(message(sq("cities", where: composite("OR", [composite("AND", eqs(51)), composite("AND", eqs(50) + [ff("z", "EQUAL", int(0))])]))) == tooMany(102, 0))
        // Before the disjunctions (101 of them here).
        #expect(message(sq("cities", where: composite("OR", eqs(101)))) == tooMany(101, 0))

        let ten = (0..<10).map { ff("g\($0)", "LESS_THAN", int(0)) }
        #expect(message(sq("cities", where: composite("AND", ten))) == nil)
        #expect(message(sq("cities", where: composite("AND", ten + ten.map { _ in ff("g0", "GREATER_THAN", int(-5)) }))) == nil)
        let names = (0..<10).map { "g\($0)" }.joined(separator: ", ")
        for (extra, name) in [(ff("`a b`", "NOT_EQUAL", int(0)), "a b"), (ff("b", "NOT_IN", arr([int(1)])), "b"),
                              (ff("__name__", "GREATER_THAN", Self.ref(h, "cities/SF")), "__key__"),
                              (JSON.object(["unaryFilter": .object(["field": .object(["fieldPath": .string("c.d")]), "op": .string("IS_NOT_NULL")])]), "c.d")] {
            #expect(message(sq("cities", where: composite("AND", ten + [extra])))
                    == "The query contains 11 distinct inequality fields: [\(names), \(name)]. A query may not have more than 10 distinct inequality fields.")
        }
    }

    /// Unnamed aggregations are `field_1`, `field_2`, … counting the unnamed ones only, as the API
    /// reference's example names them; a given alias taking one of those names is a duplicate.
    @Test func unnamedAggregationsCountOnlyTheUnnamed() throws {
        let h = try Self.cities()
        func aggregate(_ aliases: [String?]) -> JSON {
            let items: [JSON] = aliases.map { a in a.map { .object(["alias": .string($0), "count": .object([:])]) } ?? .object(["count": .object([:])]) }
            let r = h.call("POST", h.api(":runAggregationQuery"), .object(["structuredAggregationQuery": .object([
                "structuredQuery": sq("cities"), "aggregations": .array(items)])]))
            return r.status == 200 ? (r.json[0]?["result"]?["aggregateFields"] ?? .null) : (r.json["error"]?["message"] ?? .null)
        }
        #expect(aggregate([nil, "field_3", nil]) == .object(["field_1": int(5), "field_2": int(5), "field_3": int(5)]))
        #expect(aggregate([nil, "x", nil, nil]) == .object(["field_1": int(5), "field_2": int(5), "field_3": int(5), "x": int(5)]))
        #expect(aggregate(["field_2", nil, nil]) == .string("Aggregation aliases contain duplicate alias: field_2."))
        #expect(aggregate([nil, "field_1"]) == .string("Aggregation aliases contain duplicate alias: field_1."))
    }

    @Test func indexesNarrowWhatIsRead() throws {
        let h = try TestHarness()
        let writes: [JSON] = (0..<500).map { i in
            .object(["update": .object(["name": .string(h.root + "/items/i\(i)"),
                                        "fields": .object(["group": int(Int64(i % 50)), "k": int(Int64(i)), "tags": arr([str("t\(i % 7)")])])])])
        }
        #expect(h.call("POST", h.api(":commit"), .object(["writes": .array(writes)])).status == 200)
        // Fields queried before (a first query on a field scans, then builds its index rows).
        try h.indexFields("items", ["group", "k", "tags"])
        let db = DatabaseID(project: h.project, database: "(default)")
        func run(_ q: JSON) throws -> QueryExecutor.Result {
            let query = try QueryParser(database: db, parent: .root).parse(ProtoObject(json: q, path: "structured_query"))
            return try h.service.runQuery(db, query: query, consistency: .strong, caller: .admin).result
        }
        let eq = try run(sq("items", where: ff("group", "EQUAL", int(7))))
        #expect(eq.documents.count == 10)
        #expect(eq.examined == 10)
        let top = try run(sq("items", orderBy: [order("k", "DESCENDING")], limit: 5))
        #expect(top.documents.map { $0.path.lastSegment } == ["i499", "i498", "i497", "i496", "i495"])
        #expect(top.examined == 5)
        let range = try run(sq("items", where: composite("AND", [ff("k", "GREATER_THAN_OR_EQUAL", int(100)), ff("k", "LESS_THAN", int(110))])))
        #expect(range.documents.count == 10)
        #expect(range.examined == 10)
        let contains = try run(sq("items", where: ff("tags", "ARRAY_CONTAINS", str("t3")), limit: 3))
        #expect(contains.documents.count == 3)
        #expect(contains.examined == 3)
        let page = try run(sq("items", orderBy: [order("k")], limit: 2, startAt: .object(["values": .array([int(250)]), "before": .bool(true)])))
        #expect(page.documents.map { $0.path.lastSegment } == ["i250", "i251"])
        #expect(page.examined == 2)  // the cursor seeks; earlier documents are not read
        let pageDesc = try run(sq("items", orderBy: [order("k", "DESCENDING")], limit: 2, startAt: .object(["values": .array([int(250)])])))
        #expect(pageDesc.documents.map { $0.path.lastSegment } == ["i249", "i248"])
        #expect(pageDesc.examined <= 3)
        let ref: JSON = .object(["referenceValue": .string(h.root + "/items/i250")])
        let byName = try run(sq("items", orderBy: [order("__name__")], limit: 2, startAt: .object(["values": .array([ref])])))
        #expect(byName.documents.map { $0.path.lastSegment } == ["i251", "i252"])
        #expect(byName.examined <= 3)
    }

    /// `status == x ORDER BY n DESC LIMIT 10` over many matches reads about `limit` documents,
    /// not every match, and answers exactly what sorting all matches would.
    @Test func equalityWithOrderAndLimitWalksTheOrderIndex() throws {
        let h = try TestHarness()
        for batch in 0..<6 {
            let writes: [JSON] = (0..<500).map { j in
                let i = batch * 500 + j
                return .object(["update": .object(["name": .string(h.root + "/files/f\(i)"),
                                                   "fields": .object(["status": str(i % 3 == 0 ? "pending" : "ready"), "n": int(Int64(i))])])])
            }
            #expect(h.call("POST", h.api(":commit"), .object(["writes": .array(writes)])).status == 200)
        }
        // Fields queried before (a first query on a field scans, then builds its index rows).
        try h.indexFields("files", ["status", "n"])
        func run(_ q: JSON) throws -> QueryExecutor.Result { try Self.execute(h, q) }
        let top = try run(sq("files", where: ff("status", "EQUAL", str("ready")), orderBy: [order("n", "DESCENDING")], limit: 10))
        #expect(top.documents.map { $0.path.lastSegment } == [2999, 2998, 2996, 2995, 2993, 2992, 2990, 2989, 2987, 2986].map { "f\($0)" })
        #expect(top.examined < 30)
        // Few matches: the equality seek and a sort stay cheaper, and give the same order.
        let rare = try run(sq("files", where: ff("n", "EQUAL", int(42)), orderBy: [order("status")], limit: 10))
        #expect(rare.documents.map { $0.path.lastSegment } == ["f42"])
        #expect(rare.examined == 1)
    }

    /// The order index is walked with the equality checked in the index and a budget: dense
    /// matches (a user's few hundred files, half ready) read only the documents returned; matches
    /// that sit at the far end of the order make the walk give up once it has spent what sorting
    /// them costs, and the seeks then answer — the same documents either way.
    @Test func equalityWithOrderWalksTheOrderIndexWithABudget() throws {
        let h = try TestHarness()
        let writes: [JSON] = (0..<1000).map { i in
            // `dense`: every other document; `tail`: the 100 lowest `n`, which a descending walk meets last.
            .object(["update": .object(["name": .string(h.root + "/files/f\(i)"),
                                        "fields": .object(["dense": str(i % 2 == 0 ? "ready" : "pending"),
                                                           "tail": str(i < 100 ? "ready" : "pending"), "n": int(Int64(i))])])])
        }
        #expect(h.call("POST", h.api(":commit"), .object(["writes": .array(writes)])).status == 200)
        // Fields queried before (a first query on a field scans, then builds its index rows).
        try h.indexFields("files", ["dense", "tail", "n"])
        func run(_ q: JSON) throws -> QueryExecutor.Result { try Self.execute(h, q) }
        let dense = try run(sq("files", where: ff("dense", "EQUAL", str("ready")), orderBy: [order("n", "DESCENDING")], limit: 10))
        #expect(dense.documents.map { $0.path.lastSegment } == stride(from: 998, through: 980, by: -2).map { "f\($0)" })
        #expect(dense.examined == 10)
        let tail = try run(sq("files", where: ff("tail", "EQUAL", str("ready")), orderBy: [order("n", "DESCENDING")], limit: 10))
        #expect(tail.documents.map { $0.path.lastSegment } == (90...99).reversed().map { "f\($0)" })
        #expect(tail.examined == 100)  // the seeks' reads; the abandoned walk read none
        // With an offset the walk still stops at offset + limit.
        let paged = try run(sq("files", where: ff("dense", "EQUAL", str("ready")), orderBy: [order("n")], limit: 3, offset: 4))
        #expect(paged.documents.map { $0.path.lastSegment } == ["f8", "f10", "f12"])
    }

    /// Runs a structured query as admin and returns the executor's result (with `examined`).
    static func execute(_ h: TestHarness, _ q: JSON) throws -> QueryExecutor.Result {
        let db = DatabaseID(project: h.project, database: "(default)")
        let query = try QueryParser(database: db, parent: .root).parse(ProtoObject(json: q, path: "structured_query"))
        return try h.service.runQuery(db, query: query, consistency: .strong, caller: .admin).result
    }
}

@Suite struct ProtoJSONSpellingTests {
    @Test func snakeCaseMembersAndNumericEnumsAreAccepted() throws {
        let h = try QueryTests.cities()
        let body = #"{"structured_query":{"from":[{"collection_id":"cities"}],"where":{"field_filter":{"field":{"field_path":"capital"},"op":5,"value":{"boolean_value":true}}},"order_by":[{"field":{"field_path":"pop"},"direction":2}],"limit":2}}"#
        let r = h.rawCall("POST", h.api(":runQuery?%24alt=json%3Benum-encoding%3Dint"), body)
        #expect(r.status == 200, "\(r.json)")
        let ids = (r.json.arrayValue ?? []).compactMap { $0["document"]?["name"]?.stringValue?.split(separator: "/").last.map(String.init) }
        #expect(ids == ["BJ", "TOK"])
    }

    @Test func googleAccessTokensAreAdmin() throws {
        let h = try TestHarness(rules: "rules_version = '2'; service cloud.firestore { match /databases/{db}/documents { match /{d=**} { allow read, write: if false; } } }")
        #expect(h.call("PATCH", h.api("/c/d"), .object(["fields": .object([:])]), as: .header("Bearer ya29.a0AfB_byC")).status == 200)
        #expect(h.call("GET", h.api("/c/d?access_token=owner"), as: .anonymous).status == 200)
    }
}
