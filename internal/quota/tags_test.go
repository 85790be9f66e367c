package quota

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

func TestValidateTags(t *testing.T) {
	fifty := map[string]string{}
	for i := range MaxTags {
		fifty[fmt.Sprint("k", i)] = "v"
	}
	tests := []struct {
		name    string
		tags    map[string]string
		unknown map[string]bool
		want    []string // "summary@path"
	}{
		{"none", nil, nil, nil},
		{"valid", map[string]string{"team": "ml", "cost-center": "", "a b_c.d:e/f=g+h-i@j": "ü 1"}, nil, nil},
		{"limits", map[string]string{strings.Repeat("k", MaxTagKeyLength): strings.Repeat("v", MaxTagValueLength)}, nil, nil},
		{"fifty", fifty, nil, nil},
		{"empty key", map[string]string{"": "v"}, nil, []string{"Invalid tag key@tags."}},
		{"long key", map[string]string{strings.Repeat("k", MaxTagKeyLength+1): "v"}, nil,
			[]string{"Invalid tag key@tags." + strings.Repeat("k", MaxTagKeyLength+1)}},
		{"long value", map[string]string{"k": strings.Repeat("v", MaxTagValueLength+1)}, nil, []string{"Invalid tag value@tags.k"}},
		{"reserved", map[string]string{"aws:x": "v", "AWS:y": "v"}, nil, []string{"Reserved tag key@tags.AWS:y", "Reserved tag key@tags.aws:x"}},
		{"characters", map[string]string{"a*b": "v", "k": "x#y"}, nil, []string{"Invalid tag key@tags.a*b", "Invalid tag value@tags.k"}},
		{"unknown value: key checked only", map[string]string{}, map[string]bool{"aws:k": true, "ok": true}, []string{"Reserved tag key@tags.aws:k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range ValidateTags("tags", tt.tags, tt.unknown) {
				if p.Entry != -1 || p.Detail == "" {
					t.Errorf("problem %+v: want Entry -1 and a detail", p)
				}
				got = append(got, p.Summary+"@"+strings.Join(p.Path, "."))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckTagCount(t *testing.T) {
	all := map[string]string{}
	for i := range MaxTags {
		all[fmt.Sprint("k", i)] = ""
	}
	if p := CheckTagCount("tags", all); p != nil {
		t.Errorf("%d tags refused: %v", MaxTags, p)
	}
	all["one-more"] = ""
	p := CheckTagCount("tags", all)
	if len(p) != 1 || p[0].Summary != "Too many tags" || !reflect.DeepEqual(p[0].Path, []string{"tags"}) || !strings.Contains(p[0].Detail, "51") {
		t.Errorf("51 tags: got %+v", p)
	}
}

func TestMergeTags(t *testing.T) {
	tests := []struct {
		name                string
		defaults, tags, all map[string]string
	}{
		{"none", nil, nil, map[string]string{}},
		{"defaults only", map[string]string{"env": "prod"}, nil, map[string]string{"env": "prod"}},
		{"own only", nil, map[string]string{"team": "ml"}, map[string]string{"team": "ml"}},
		{"resource wins", map[string]string{"env": "prod", "owner": "platform"}, map[string]string{"env": "dev", "team": "ml"},
			map[string]string{"env": "dev", "owner": "platform", "team": "ml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MergeTags(tt.defaults, tt.tags); !reflect.DeepEqual(got, tt.all) {
				t.Errorf("got %v, want %v", got, tt.all)
			}
		})
	}
}

func TestTagChanges(t *testing.T) {
	from := map[string]string{"keep": "1", "change": "old", "drop": "x"}
	to := map[string]string{"keep": "1", "change": "new", "add": ""}
	set, remove := TagChanges(from, to)
	if want := map[string]string{"change": "new", "add": ""}; !reflect.DeepEqual(set, want) {
		t.Errorf("set %v, want %v", set, want)
	}
	if want := []string{"drop"}; !reflect.DeepEqual(remove, want) {
		t.Errorf("remove %v, want %v", remove, want)
	}
	set, remove = TagChanges(nil, nil)
	if len(set) != 0 || len(remove) != 0 {
		t.Errorf("no tags: set %v, remove %v", set, remove)
	}
}

func TestResourceTags(t *testing.T) {
	tests := []struct {
		name                    string
		stored, defaults, prior map[string]string
		priorNull               bool
		want                    map[string]string
	}{
		{"nothing, configured none", nil, nil, nil, true, nil},
		{"nothing, configured empty", nil, nil, map[string]string{}, false, map[string]string{}},
		{"only defaults stored", map[string]string{"env": "prod"}, map[string]string{"env": "prod"}, nil, true, nil},
		{"own beside defaults", map[string]string{"env": "prod", "team": "ml"}, map[string]string{"env": "prod"},
			map[string]string{"team": "ml"}, false, map[string]string{"team": "ml"}},
		{"default overridden", map[string]string{"env": "dev"}, map[string]string{"env": "prod"},
			map[string]string{"env": "dev"}, false, map[string]string{"env": "dev"}},
		{"own tag equal to a default stays own", map[string]string{"env": "prod"}, map[string]string{"env": "prod"},
			map[string]string{"env": "prod"}, false, map[string]string{"env": "prod"}},
		{"added elsewhere shows", map[string]string{"team": "ml", "x": "1"}, nil, map[string]string{"team": "ml"}, false,
			map[string]string{"team": "ml", "x": "1"}},
		{"added elsewhere to untagged", map[string]string{"x": "1"}, nil, nil, true, map[string]string{"x": "1"}},
		{"default changed elsewhere shows", map[string]string{"env": "test"}, map[string]string{"env": "prod"}, nil, true,
			map[string]string{"env": "test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResourceTags(tt.stored, tt.defaults, tt.prior, tt.priorNull); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestTagsAnnotation(t *testing.T) {
	tags := map[string]string{"b": "2", "a": "1", "c d": "ü"}
	enc := EncodeTags(tags)
	if enc != `{"a":"1","b":"2","c d":"ü"}` {
		t.Errorf("encoded %s: want canonical JSON with sorted keys", enc)
	}
	var meta metav1.ObjectMeta
	SetTagsAnnotation(&meta, tags)
	got, err := TagsOf(meta)
	if err != nil || !reflect.DeepEqual(got, tags) {
		t.Errorf("round trip: %v, %v", got, err)
	}
	var none metav1.ObjectMeta
	SetTagsAnnotation(&none, map[string]string{})
	if none.Annotations != nil {
		t.Errorf("no tags wrote %v", none.Annotations)
	}
	if got, err := TagsOf(none); got != nil || err != nil {
		t.Errorf("no annotation: %v, %v", got, err)
	}
	for _, bad := range []string{`[1]`, `{"a":1}`, `{`} {
		meta := metav1.ObjectMeta{Name: "q", Annotations: map[string]string{AnnotationTags: bad}}
		if _, err := TagsOf(meta); err == nil || !strings.Contains(err.Error(), AnnotationTags) {
			t.Errorf("%s: error %v, want one naming the annotation", bad, err)
		}
	}
}

func TestClusterQueueTagsRoundTrip(t *testing.T) {
	c := base(Entry{InstanceType: "ml.g5.12xlarge", Count: i64(1)})
	c.Tags = map[string]string{"team": "ml", "env": "prod"}
	rc, problems := Plan(catalog.Builtin(), c)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	cq, err := RenderClusterQueue(catalog.Builtin(), rc)
	if err != nil {
		t.Fatal(err)
	}
	if got := cq.Annotations[AnnotationTags]; got != `{"env":"prod","team":"ml"}` {
		t.Errorf("tags annotation %q", got)
	}
	back, _, err := FromClusterQueue(catalog.Builtin(), cq)
	if err != nil || !reflect.DeepEqual(back.Tags, c.Tags) {
		t.Errorf("read back tags %v (%v), want %v", back.Tags, err, c.Tags)
	}
	c.Tags = nil
	rc, _ = Plan(catalog.Builtin(), c)
	cq, _ = RenderClusterQueue(catalog.Builtin(), rc)
	if _, ok := cq.Annotations[AnnotationTags]; ok {
		t.Errorf("untagged quota rendered %s", AnnotationTags)
	}
}
