package sagemakerclient

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// HTTPClient is the SDK's HTTP client with a body of its own for net/http. smithy-go v1.28.9
// closes the request body as soon as the response headers are in, and its closed body then
// answers net/http's final WriteTo (the check for bytes beyond Content-Length) with io.EOF,
// which net/http takes for a write error: it closes the connection, at times while the
// response body is still being read ("deserialization failed ... use of closed network
// connection"). A server that answers as soon as it has the request meets this (about once in
// 150 requests of a local emulator); a create so failed would have an unknown outcome.
func HTTPClient() aws.HTTPClient { return withOwnBody(awshttp.NewBuildableClient()) }

// withOwnBody wraps next (the configuration's client, with its CA bundle and proxy).
func withOwnBody(next aws.HTTPClient) aws.HTTPClient {
	if next == nil {
		next = awshttp.NewBuildableClient()
	}
	return ownBody{next}
}

type ownBody struct{ next aws.HTTPClient }

func (o ownBody) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if err := r.Body.Close(); err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	return o.next.Do(r)
}
