package main

// Server-streaming reads through grpc-go: RunQuery (the REST runQuery row's query) and
// BatchGetDocuments (the REST batchGet row's ten documents), each call read to its end and checked.

import (
	"context"
	"fmt"
	"io"
	"strings"

	wrappers "github.com/golang/protobuf/ptypes/wrappers"
	pb "google.golang.org/genproto/googleapis/firestore/v1"
)

// queryRequest: RunQuery on users/U/files, status == "ready", newest -expect by n descending.
func queryRequest() *pb.RunQueryRequest {
	return &pb.RunQueryRequest{
		Parent: docsRoot() + "/users/" + *uid,
		QueryType: &pb.RunQueryRequest_StructuredQuery{StructuredQuery: &pb.StructuredQuery{
			From: []*pb.StructuredQuery_CollectionSelector{{CollectionId: "files"}},
			Where: &pb.StructuredQuery_Filter{FilterType: &pb.StructuredQuery_Filter_FieldFilter{
				FieldFilter: &pb.StructuredQuery_FieldFilter{
					Field: &pb.StructuredQuery_FieldReference{FieldPath: "status"},
					Op:    pb.StructuredQuery_FieldFilter_EQUAL,
					Value: str("ready"),
				}}},
			OrderBy: []*pb.StructuredQuery_Order{{
				Field:     &pb.StructuredQuery_FieldReference{FieldPath: "n"},
				Direction: pb.StructuredQuery_DESCENDING,
			}},
			Limit: &wrappers.Int32Value{Value: int32(*expect)},
		}},
	}
}

// batchGetRequest: BatchGetDocuments of -doc (comma-separated names under the documents root).
func batchGetRequest() *pb.BatchGetDocumentsRequest {
	var names []string
	for _, d := range strings.Split(*doc, ",") {
		names = append(names, docsRoot()+"/"+d)
	}
	return &pb.BatchGetDocumentsRequest{Database: database(), Documents: names}
}

// runQueryCalls: queryRequest's RunQuery, every call's stream read to its end; a call counts only
// when it carried exactly -expect documents.
func runQueryCalls(ctx context.Context) {
	req := queryRequest()
	runUnary(ctx, func(client pb.FirestoreClient, _ int64) error {
		stream, err := client.RunQuery(callContext(ctx), req)
		if err != nil {
			return err
		}
		docs, err := drain(func() (bool, error) {
			r, err := stream.Recv()
			return err == nil && r.Document != nil, err
		})
		if err != nil {
			return err
		}
		if docs != *expect {
			return fmt.Errorf("RunQuery answered %d documents, not %d", docs, *expect)
		}
		return nil
	})
}

// runBatchGetCalls: BatchGetDocuments of -docs (comma-separated names under the documents root),
// every call's stream read to its end; a call counts only when every document came back found.
func runBatchGetCalls(ctx context.Context) {
	req := batchGetRequest()
	names := req.Documents
	runUnary(ctx, func(client pb.FirestoreClient, _ int64) error {
		stream, err := client.BatchGetDocuments(callContext(ctx), req)
		if err != nil {
			return err
		}
		found, err := drain(func() (bool, error) {
			r, err := stream.Recv()
			return err == nil && r.GetFound() != nil, err
		})
		if err != nil {
			return err
		}
		if found != len(names) {
			return fmt.Errorf("BatchGetDocuments found %d of %d documents", found, len(names))
		}
		return nil
	})
}

// drain reads a server stream to its end (io.EOF); `recv` receives one message and says whether it counts.
func drain(recv func() (bool, error)) (int, error) {
	n := 0
	for {
		counted, err := recv()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if counted {
			n++
		}
	}
}
