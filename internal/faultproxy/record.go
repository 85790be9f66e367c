package faultproxy

import (
	"bytes"
	"io"
	"net/http"
)

// Recorded is one request the proxy received with Config.Record, kept whole so that it can
// be counted and replayed.
type Recorded struct {
	Method      string
	URI         string // path and query
	ContentType string
	Accept      string
	Body        []byte
	Status      int // the answer's status, recorded as its header is written; 0 before that
	Class       Request
}

// Recorded returns the requests received since the last ResetRecorded (or since New), in
// the order they arrived.
func (p *Proxy) Recorded() []Recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Recorded(nil), p.recorded...)
}

// ResetRecorded starts a new recording window; the answers of requests of the old window
// that are still in flight are not recorded.
func (p *Proxy) ResetRecorded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.window++
	p.recorded = nil
}

// record keeps r whole, with its body read and left readable from the start, and makes *w
// remember the status; done stores the status once the answer is complete.
func (p *Proxy) record(r *http.Request, w *http.ResponseWriter) (done func(), err error) {
	var body []byte
	if r.Body != nil {
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	rec := Recorded{
		Method:      r.Method,
		URI:         r.URL.RequestURI(),
		ContentType: r.Header.Get("Content-Type"),
		Accept:      r.Header.Get("Accept"),
		Body:        body,
		Class:       ClassifyRequest(r.Method, r.URL.Path, r.URL.Query(), r.Header.Get("Content-Type")),
	}
	p.mu.Lock()
	window, idx := p.window, len(p.recorded)
	p.recorded = append(p.recorded, rec)
	p.mu.Unlock()

	store := func(code int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.window == window && idx < len(p.recorded) {
			p.recorded[idx].Status = code
		}
	}
	// Stored as the header goes out, before the client can have the answer: a client that
	// reads Recorded right after its response must find the status.
	sw := &statusWriter{ResponseWriter: *w, onStatus: store}
	*w = sw
	return func() { store(sw.status()) }, nil
}

// statusWriter remembers the status code; Unwrap lets the reverse proxy flush watch
// responses and reset hijack the connection through it.
type statusWriter struct {
	http.ResponseWriter
	code     int
	onStatus func(code int)
}

func (s *statusWriter) setCode(code int) {
	if s.code == 0 {
		s.code = code
		s.onStatus(code)
	}
}

func (s *statusWriter) WriteHeader(code int) {
	s.setCode(code)
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.setCode(http.StatusOK)
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}
