package backend

import (
	"slices"
	"testing"
)

// An observer sees the waits that begin while it is registered, and only those.
func TestObserveWaits(t *testing.T) {
	var seen, other []Wait
	stop := ObserveWaits(func(w Wait) { seen = append(seen, w) })
	stopOther := ObserveWaits(func(w Wait) { other = append(other, w) })
	defer stopOther()
	first := Wait{Kind: WaitQuotaGone, Team: "ml"}
	Waiting(first)
	stop()
	second := Wait{Kind: WaitQuotaClaim, Team: "ml"}
	Waiting(second)
	if !slices.Equal(seen, []Wait{first}) || !slices.Equal(other, []Wait{first, second}) {
		t.Errorf("observers saw %v and %v, want [%v] and [%v %v]", seen, other, first, first, second)
	}
}
