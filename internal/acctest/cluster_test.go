package acctest

import (
	"os"
	"testing"
)

// Without TF_ACC the gates skip, as resource.Test does, rather than fail or run.
func TestRequireSkipsWithoutTFACC(t *testing.T) {
	if os.Getenv("TF_ACC") != "" {
		t.Skip("TF_ACC is set: the gates would run the test")
	}
	for name, gate := range map[string]func(testing.TB){"RequireCluster": RequireCluster, "RequireKueue": RequireKueue} {
		ran := false
		t.Run(name, func(t *testing.T) {
			gate(t)
			ran = true
		})
		if ran {
			t.Errorf("%s did not stop the test without TF_ACC", name)
		}
	}
	if Current() != nil {
		t.Error("a cluster is set up without TF_ACC")
	}
}
