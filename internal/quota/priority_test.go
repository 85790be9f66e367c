package quota

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestPriorityClassObjectName(t *testing.T) {
	if got := PriorityClassObjectName("training"); got != "training-priority" {
		t.Errorf("object name %q, want training-priority", got)
	}
}

func TestValidatePriorityClasses(t *testing.T) {
	long := strings.Repeat("a", MaxPriorityClassNameLength)
	eleven := make([]PriorityClass, MaxPriorityClasses+1)
	for i := range eleven {
		eleven[i] = PriorityClass{Name: string(rune('a' + i)), Weight: int64(i)}
	}
	tests := []struct {
		name    string
		classes []PriorityClass
		want    []string // "summary@path"
	}{
		{"empty", nil, nil},
		{"valid", []PriorityClass{{"inference", 100}, {"training", 0}, {long, 50}}, nil},
		{"unknown names are skipped", []PriorityClass{{"", 10}, {"", 10}}, nil},
		{"weight range", []PriorityClass{{"a", -1}, {"b", 101}},
			[]string{"Priority weight out of range@priority_classes.0.weight", "Priority weight out of range@priority_classes.1.weight"}},
		{"bad names", []PriorityClass{{"Training", 1}, {"a_b", 1}, {"-a", 1}, {long + "a", 1}},
			[]string{"Invalid priority class name@priority_classes.0.name", "Invalid priority class name@priority_classes.1.name",
				"Invalid priority class name@priority_classes.2.name", "Invalid priority class name@priority_classes.3.name"}},
		{"duplicates", []PriorityClass{{"a", 1}, {"b", 2}, {"a", 3}},
			[]string{"Duplicate priority class@priority_classes.2.name"}},
		{"too many", eleven, []string{"Too many priority classes@priority_classes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range ValidatePriorityClasses(tt.classes) {
				if p.Entry != -1 || p.Detail == "" {
					t.Errorf("problem %+v: want Entry -1 and a detail", p)
				}
				got = append(got, p.Summary+"@"+strings.Join(p.Path, "."))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRenderPriorityClass(t *testing.T) {
	wpc := RenderPriorityClass(PriorityClass{Name: "training", Weight: 75}, "id-1")
	if wpc.Name != "training-priority" || wpc.Value != 75 || wpc.APIVersion != "kueue.x-k8s.io/v1beta2" ||
		wpc.Kind != "WorkloadPriorityClass" || wpc.Labels[LabelManagedBy] != ManagedByValue || wpc.Annotations[AnnotationOwner] != "id-1" {
		t.Errorf("rendered %+v", wpc)
	}
	// value is required by the CRD: weight 0 must be written, not omitted.
	raw, err := json.Marshal(RenderPriorityClass(PriorityClass{Name: "low"}, ""))
	if err != nil || !strings.Contains(string(raw), `"value":0`) || strings.Contains(string(raw), "annotations") {
		t.Errorf("weight 0 without owner renders %s (%v)", raw, err)
	}
}

func TestPriorityClassDrift(t *testing.T) {
	meta := RenderPriorityClass(PriorityClass{Name: "training"}, "id-1").ObjectMeta
	if d := PriorityClassDrift("training", "id-1", meta); len(d) != 0 {
		t.Errorf("unchanged: drift %q", d)
	}
	meta.Labels = map[string]string{"other": "x"}
	meta.Annotations[AnnotationOwner] = "id-2"
	got := PriorityClassDrift("training", "id-1", meta)
	want := []string{
		`WorkloadPriorityClass "training-priority" label app.kubernetes.io/managed-by is missing`,
		`WorkloadPriorityClass "training-priority" annotation hyperpod.quotaworks.io/owner-id was changed outside Terraform`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("drift %q, want %q", got, want)
	}
}
