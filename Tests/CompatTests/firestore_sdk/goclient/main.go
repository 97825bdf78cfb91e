// A user's Go backend against FIRESTORE_EMULATOR_HOST: the Go Firestore client (Debian's
// golang-google-cloud-dev), unmodified. Each step prints "ok <name>" or exits non-zero saying why.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"cloud.google.com/go/firestore"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func fail(step string, format string, args ...interface{}) {
	fmt.Printf("FAIL %s: %s\n", step, fmt.Sprintf(format, args...))
	os.Exit(1)
}

func ids(step string, it *firestore.DocumentIterator) []string {
	var out []string
	for {
		d, err := it.Next()
		if err == iterator.Done {
			return out
		}
		if err != nil {
			fail(step, "%v", err)
		}
		out = append(out, d.Ref.ID)
	}
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	project := os.Getenv("GCLOUD_PROJECT")
	client, err := firestore.NewClient(ctx, project)
	if err != nil {
		fail("client", "%v", err)
	}
	defer client.Close()
	coll := client.Collection(os.Args[1])

	// Set, Get, every basic type.
	when := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	ref := coll.Doc("a")
	if _, err := ref.Set(ctx, map[string]interface{}{"s": "x", "n": 42, "f": 1.5, "b": true, "t": when,
		"arr": []interface{}{1, "two"}, "m": map[string]interface{}{"k": "v"}, "nil": nil, "by": []byte{0, 255}}); err != nil {
		fail("set", "%v", err)
	}
	snap, err := ref.Get(ctx)
	if err != nil {
		fail("get", "%v", err)
	}
	d := snap.Data()
	if d["s"] != "x" || d["n"] != int64(42) || d["f"] != 1.5 || d["b"] != true || !d["t"].(time.Time).Equal(when) || d["nil"] != nil {
		fail("get", "unexpected data %v", d)
	}
	fmt.Println("ok set-get")

	// Update with a server timestamp and an increment.
	if _, err := ref.Update(ctx, []firestore.Update{{Path: "n", Value: firestore.Increment(8)},
		{Path: "at", Value: firestore.ServerTimestamp}}); err != nil {
		fail("update", "%v", err)
	}
	snap, _ = ref.Get(ctx)
	if snap.Data()["n"] != int64(50) {
		fail("update", "n = %v", snap.Data()["n"])
	}
	if _, ok := snap.Data()["at"].(time.Time); !ok {
		fail("update", "at = %v", snap.Data()["at"])
	}
	fmt.Println("ok update-transforms")

	// Create on an existing document: AlreadyExists. Update of a missing one: NotFound.
	if _, err := ref.Create(ctx, map[string]interface{}{"x": 1}); status.Code(err) != codes.AlreadyExists {
		fail("create-existing", "got %v", err)
	}
	if _, err := coll.Doc("missing").Update(ctx, []firestore.Update{{Path: "x", Value: 1}}); status.Code(err) != codes.NotFound {
		fail("update-missing", "got %v", err)
	}
	fmt.Println("ok preconditions")

	// Queries.
	for i, age := range []int{30, 20, 40, 20} {
		if _, err := coll.Doc(fmt.Sprintf("p%d", i)).Set(ctx, map[string]interface{}{"age": age, "kind": "person"}); err != nil {
			fail("seed", "%v", err)
		}
	}
	got := ids("query", coll.Where("kind", "==", "person").Where("age", ">", 20).OrderBy("age", firestore.Asc).Documents(ctx))
	if !same(got, []string{"p0", "p2"}) {
		fail("query", "got %v", got)
	}
	got = ids("query-limit", coll.Where("kind", "==", "person").OrderBy("age", firestore.Desc).Limit(2).Documents(ctx))
	if !same(got, []string{"p2", "p0"}) {
		fail("query-limit", "got %v", got)
	}
	got = ids("query-in", coll.Where("age", "in", []int{20}).Documents(ctx))
	if !same(got, []string{"p1", "p3"}) {
		fail("query-in", "got %v", got)
	}
	fmt.Println("ok queries")

	// GetAll with a missing document.
	snaps, err := client.GetAll(ctx, []*firestore.DocumentRef{coll.Doc("p0"), coll.Doc("nope")})
	if err != nil || len(snaps) != 2 || !snaps[0].Exists() || snaps[1].Exists() {
		fail("getall", "%v %v", snaps, err)
	}
	fmt.Println("ok getall")

	// A transaction that reads and writes.
	err = client.RunTransaction(ctx, func(ctx context.Context, tx *firestore.Transaction) error {
		s, err := tx.Get(coll.Doc("p0"))
		if err != nil {
			return err
		}
		age, _ := s.DataAt("age")
		return tx.Update(coll.Doc("p0"), []firestore.Update{{Path: "age", Value: age.(int64) + 1}})
	})
	if err != nil {
		fail("transaction", "%v", err)
	}
	snap, _ = coll.Doc("p0").Get(ctx)
	if snap.Data()["age"] != int64(31) {
		fail("transaction", "age = %v", snap.Data()["age"])
	}
	fmt.Println("ok transaction")

	// A batch, then deletes.
	b := client.Batch()
	b.Set(coll.Doc("b1"), map[string]interface{}{"v": 1})
	b.Delete(coll.Doc("p3"))
	if _, err := b.Commit(ctx); err != nil {
		fail("batch", "%v", err)
	}
	if s, err := coll.Doc("p3").Get(ctx); status.Code(err) != codes.NotFound || s.Exists() {
		fail("batch", "p3 still there: %v", err)
	}
	fmt.Println("ok batch")

	// Listing the collection's documents and the root's collections.
	refs, err := coll.DocumentRefs(ctx).GetAll()
	if err != nil {
		fail("list", "%v", err)
	}
	var names []string
	for _, r := range refs {
		names = append(names, r.ID)
	}
	sort.Strings(names)
	if !same(names, []string{"a", "b1", "p0", "p1", "p2"}) {
		fail("list", "got %v", names)
	}
	fmt.Println("ok list")

	// Snapshot listeners (the Listen stream): a query and a document, fed by writes through
	// the same client. Snapshots() returns a snapshot only when the result changed.
	live := client.Collection(os.Args[1] + "-live")
	qit := live.Where("on", "==", true).Snapshots(ctx)
	defer qit.Stop()
	dit := live.Doc("x").Snapshots(ctx)
	defer dit.Stop()
	expectQuery := func(step string, want []string, wantChanges []string) {
		qs, err := qit.Next()
		if err != nil {
			fail(step, "query snapshot: %v", err)
		}
		got := ids(step, qs.Documents)
		kinds := map[firestore.DocumentChangeKind]string{firestore.DocumentAdded: "ADDED",
			firestore.DocumentModified: "MODIFIED", firestore.DocumentRemoved: "REMOVED"}
		var changes []string
		for _, c := range qs.Changes {
			changes = append(changes, kinds[c.Kind]+" "+c.Doc.Ref.ID)
		}
		sort.Strings(changes)
		if !same(got, want) || !same(changes, wantChanges) || qs.Size != len(want) {
			fail(step, "query snapshot %v %v (size %d), want %v %v", got, changes, qs.Size, want, wantChanges)
		}
	}
	expectDoc := func(step string, n int64) {
		ds, err := dit.Next()
		if err != nil {
			fail(step, "document snapshot: %v", err)
		}
		if n < 0 && ds.Exists() || n >= 0 && (!ds.Exists() || ds.Data()["n"] != n) {
			fail(step, "document snapshot exists=%v data=%v, want n=%d", ds.Exists(), ds.Data(), n)
		}
	}
	set := func(step, id string, data map[string]interface{}) {
		if _, err := live.Doc(id).Set(ctx, data); err != nil {
			fail(step, "%v", err)
		}
	}
	expectQuery("snapshots-initial", nil, nil)
	expectDoc("snapshots-initial", -1)
	set("snapshots-add", "x", map[string]interface{}{"on": true, "n": 1})
	expectQuery("snapshots-add", []string{"x"}, []string{"ADDED x"})
	expectDoc("snapshots-add", 1)
	set("snapshots-add2", "y", map[string]interface{}{"on": true, "n": 2})
	expectQuery("snapshots-add2", []string{"x", "y"}, []string{"ADDED y"})
	if _, err := live.Doc("x").Update(ctx, []firestore.Update{{Path: "n", Value: 5}}); err != nil {
		fail("snapshots-modify", "%v", err)
	}
	expectQuery("snapshots-modify", []string{"x", "y"}, []string{"MODIFIED x"})
	expectDoc("snapshots-modify", 5)
	set("snapshots-leave", "y", map[string]interface{}{"on": false, "n": 2})
	expectQuery("snapshots-leave", []string{"x"}, []string{"REMOVED y"})
	if _, err := live.Doc("x").Delete(ctx); err != nil {
		fail("snapshots-delete", "%v", err)
	}
	expectQuery("snapshots-delete", nil, []string{"REMOVED x"})
	expectDoc("snapshots-delete", -1)
	fmt.Println("ok snapshots")
}
