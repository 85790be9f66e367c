package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/rest"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
)

// replayer is the sequential-requests floor: one client-go HTTP client (rest.HTTPClientFor)
// that sends recorded requests through the counting proxy one after another, reading each
// answer whole and decoding nothing, with no client-side rate limit.
type replayer struct {
	base   string
	client *http.Client
}

func newReplayer(proxyURL string) (*replayer, error) {
	c, err := rest.HTTPClientFor(&rest.Config{Host: proxyURL, Timeout: 60 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("replay client: %w", err)
	}
	return &replayer{base: proxyURL, client: c}, nil
}

// replayResult is the outcome of replaying one command's requests.
type replayResult struct {
	Seconds  float64 `json:"seconds"`
	Requests int     `json:"requests"`
	// Writes whose answer has another status than the provider got: the replay then did not
	// redo the same work. (GETs may differ by timing: a poll that saw an object still
	// terminating may see it gone.)
	Mismatches int      `json:"write_status_mismatches"`
	Examples   []string `json:"mismatch_examples,omitempty"` // the first few
}

// sameOutcome compares statuses by what they mean for the floor: any two successes are
// alike (server-side apply answers 201 when it creates and 200 when it updates).
func sameOutcome(a, b int) bool {
	if a/100 == 2 && b/100 == 2 {
		return true
	}
	return a == b
}

// replay sends reqs one after another (watches excluded: they never end on their own) and
// times the whole sequence.
func (p *replayer) replay(ctx context.Context, reqs []recordedRequest) (replayResult, error) {
	var res replayResult
	start := time.Now()
	for _, r := range reqs {
		if r.Class.Verb == faultproxy.VerbWatch {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, r.Method, p.base+r.URI, bytes.NewReader(r.Body))
		if err != nil {
			return res, fmt.Errorf("replaying %s %s: %w", r.Method, r.URI, err)
		}
		if r.ContentType != "" {
			req.Header.Set("Content-Type", r.ContentType)
		}
		if r.Accept != "" {
			req.Header.Set("Accept", r.Accept)
		}
		resp, err := p.client.Do(req)
		if err != nil {
			return res, fmt.Errorf("replaying %s %s: %w", r.Method, r.URI, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return res, fmt.Errorf("replaying %s %s: reading the answer: %w", r.Method, r.URI, err)
		}
		res.Requests++
		if r.Method != http.MethodGet && r.Status != 0 && !sameOutcome(r.Status, resp.StatusCode) {
			res.Mismatches++
			if len(res.Examples) < 3 {
				res.Examples = append(res.Examples, fmt.Sprintf("%s %s: %d, provider got %d", r.Method, r.URI, resp.StatusCode, r.Status))
			}
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
