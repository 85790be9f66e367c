package admission_test

import (
	"reflect"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/admission"
)

func TestParseManagerConfig(t *testing.T) {
	const v1beta2 = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
	const v1beta1 = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"
	tests := []struct {
		name string
		doc  string
		want admission.ManagerConfig
	}{
		{
			name: "v1beta2 without fair sharing or waitForPodsReady",
			doc:  v1beta2 + "namespace: kueue-system\nintegrations:\n  frameworks: [batch/job]\n",
			want: admission.ManagerConfig{Known: true},
		},
		{
			name: "v1beta2: fairSharing set turns it on",
			doc:  v1beta2 + "fairSharing:\n  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n",
			want: admission.ManagerConfig{Known: true, FairSharing: true, PreemptionStrategies: []string{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}},
		},
		{
			name: "v1beta2: an empty fairSharing turns it on with the default strategies",
			doc:  v1beta2 + "fairSharing: {}\n",
			want: admission.ManagerConfig{Known: true, FairSharing: true},
		},
		{
			name: "v1beta1: fairSharing.enable false leaves it off",
			doc:  v1beta1 + "fairSharing:\n  enable: false\n  preemptionStrategies: [LessThanInitialShare]\n",
			want: admission.ManagerConfig{Known: true},
		},
		{
			name: "v1beta1: fairSharing.enable true",
			doc:  v1beta1 + "fairSharing:\n  enable: true\n  preemptionStrategies: [LessThanInitialShare]\n",
			want: admission.ManagerConfig{Known: true, FairSharing: true, PreemptionStrategies: []string{"LessThanInitialShare"}},
		},
		{
			name: "v1beta2: waitForPodsReady set, blockAdmission defaults to false",
			doc:  v1beta2 + "waitForPodsReady:\n  timeout: 5m\n",
			want: admission.ManagerConfig{Known: true, WaitForPodsReady: true},
		},
		{
			name: "v1beta2: waitForPodsReady with blockAdmission",
			doc:  v1beta2 + "waitForPodsReady:\n  timeout: 5m\n  blockAdmission: true\n",
			want: admission.ManagerConfig{Known: true, WaitForPodsReady: true, BlockAdmission: true},
		},
		{
			name: "v1beta1: waitForPodsReady.enable, blockAdmission defaults to true",
			doc:  v1beta1 + "waitForPodsReady:\n  enable: true\n",
			want: admission.ManagerConfig{Known: true, WaitForPodsReady: true, BlockAdmission: true},
		},
		{
			name: "v1beta1: waitForPodsReady not enabled",
			doc:  v1beta1 + "waitForPodsReady:\n  blockAdmission: true\n",
			want: admission.ManagerConfig{Known: true},
		},
		{
			name: "the DisableWaitForPodsReady feature gate",
			doc:  v1beta2 + "waitForPodsReady:\n  blockAdmission: true\nfeatureGates:\n  DisableWaitForPodsReady: true\n",
			want: admission.ManagerConfig{Known: true, FeatureGates: map[string]bool{"DisableWaitForPodsReady": true}},
		},
		{
			name: "admission fair sharing and resources",
			doc: v1beta2 + "admissionFairSharing:\n  usageHalfLifeTime: 168h\n  usageSamplingInterval: 5m\n" +
				"resources:\n  excludeResourcePrefixes: [example.com/]\n  quotaCheckStrategy: BlockUndeclared\n" +
				"  transformations:\n  - input: nvidia.com/mig-4g.5gb\n    strategy: Replace\n    outputs:\n      example.com/accelerator-memory: 5Gi\n",
			want: admission.ManagerConfig{Known: true, AdmissionFairSharing: true, ExcludeResourcePrefixes: []string{"example.com/"},
				ResourceTransformations: []string{"nvidia.com/mig-4g.5gb"}, QuotaCheckStrategy: "BlockUndeclared"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := admission.ParseManagerConfig([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	for name, doc := range map[string]string{
		"not YAML":           "fairSharing: [",
		"another kind":       "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: ConfigMap\n",
		"another apiVersion": "apiVersion: config.kueue.x-k8s.io/v1alpha1\nkind: Configuration\n",
	} {
		if got, err := admission.ParseManagerConfig([]byte(doc)); err == nil {
			t.Errorf("%s: got %+v, want an error", name, got)
		}
	}
}

// A known configuration decides fair sharing; an unknown one leaves the detected value.
func TestWithManager(t *testing.T) {
	for _, tt := range []struct {
		detected bool
		m        admission.ManagerConfig
		want     bool
	}{
		{true, admission.ManagerConfig{}, true},
		{false, admission.ManagerConfig{}, false},
		{true, admission.ManagerConfig{Known: true}, false},
		{false, admission.ManagerConfig{Known: true, FairSharing: true}, true},
	} {
		c := admission.Cluster{FairSharing: tt.detected}.WithManager(tt.m)
		if c.FairSharing != tt.want || !reflect.DeepEqual(c.Manager, tt.m) {
			t.Errorf("detected %t, %+v: FairSharing %t, Manager %+v; want %t", tt.detected, tt.m, c.FairSharing, c.Manager, tt.want)
		}
	}
}

func TestParseFeatureGates(t *testing.T) {
	got, err := admission.ParseFeatureGates("VisibilityOnDemand=false, PriorityBoost=true")
	if want := map[string]bool{"VisibilityOnDemand": false, "PriorityBoost": true}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
	for _, flag := range []string{"PriorityBoost", "PriorityBoost=maybe", "=true"} {
		if got, err := admission.ParseFeatureGates(flag); err == nil {
			t.Errorf("%q: got %v, want an error", flag, got)
		}
	}
	m := admission.ManagerConfig{Known: true, WaitForPodsReady: true, BlockAdmission: true}.
		WithFeatureGates(map[string]bool{"DisableWaitForPodsReady": true})
	if m.WaitForPodsReady || m.BlockAdmission || !m.Known {
		t.Errorf("DisableWaitForPodsReady on the command line: got %+v, want waitForPodsReady off", m)
	}
}
