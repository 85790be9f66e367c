package quota

import (
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

func TestCheckRanges(t *testing.T) {
	cat := catalog.Builtin()
	for _, tc := range []struct {
		name  string
		entry Entry
		want  string
	}{
		{"within", Entry{InstanceType: "ml.p5.48xlarge", Count: ptr(int64(1000))}, ""},
		{"accelerators from a large count", Entry{InstanceType: "ml.p5.48xlarge", Count: ptr(int64(MaxAmount))}, "accelerators would be 80000000"},
		{"vcpu from a large count", Entry{InstanceType: "ml.c5.4xlarge", Count: ptr(int64(MaxAmount))}, "vcpu would be 160000000"},
		{"configured values are Validate's", Entry{InstanceType: "ml.c5.4xlarge", Count: ptr(int64(MaxAmount)), VCPU: ratInt(1), MemoryGiB: ratInt(1), EFA: ptr(int64(0))}, ""},
	} {
		cfg := Config{Name: "q", Team: "a", Resources: []Entry{tc.entry}}
		if problems := Validate(cat, cfg); len(problems) > 0 {
			t.Fatalf("%s: %v", tc.name, problems)
		}
		got := CheckRanges(Defaults(cat, cfg))
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%s: unexpected %v", tc.name, got)
		case tc.want != "" && (len(got) == 0 || !strings.Contains(got[0].Detail, tc.want) || got[0].Entry != 0):
			t.Errorf("%s: %v, want a problem of entry 0 containing %q", tc.name, got, tc.want)
		}
	}
}
