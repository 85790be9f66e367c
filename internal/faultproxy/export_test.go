package faultproxy

import "net/http"

// ActiveConns is how many client connections are serving a request, for tests that must start
// an outage between requests.
func ActiveConns(p *Proxy) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, st := range p.conns {
		if st == http.StateActive {
			n++
		}
	}
	return n
}
