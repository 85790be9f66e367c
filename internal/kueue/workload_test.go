package kueue

import (
	"encoding/json"
	"testing"
)

// Kueue's batch/Job integration writes a topology request naming only the pod index label on
// every pod set; only a required, preferred or unconstrained topology asks for topology-aware
// scheduling.
func TestTopologyRequested(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"name":"main","count":1}`: false,
		`{"name":"main","count":1,"topologyRequest":{"podIndexLabel":"batch.kubernetes.io/job-completion-index"}}`: false,
		`{"name":"main","count":1,"topologyRequest":{"required":"cloud.provider.com/topology-rack"}}`:              true,
		`{"name":"main","count":1,"topologyRequest":{"preferred":"cloud.provider.com/topology-block"}}`:            true,
		`{"name":"main","count":1,"topologyRequest":{"unconstrained":true}}`:                                       true,
		`{"name":"main","count":1,"topologyRequest":{"unconstrained":false}}`:                                      false,
	} {
		var ps PodSet
		if err := json.Unmarshal([]byte(raw), &ps); err != nil {
			t.Fatal(err)
		}
		if got := ps.TopologyRequest.Requested(); got != want {
			t.Errorf("%s: Requested() = %v, want %v", raw, got, want)
		}
	}
}
