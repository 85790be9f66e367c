package quota

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Tags of the objects the provider writes, as AWS tags resources: the SageMaker API holds them
// on a compute quota and a cluster scheduler config; on a cluster's own Kueue the provider keeps
// them in AnnotationTags. Resources take a `tags` map and compute `tags_all`, the tags merged
// over the provider's default tags.

// AWS's limits of a resource's tags (SageMaker's Tag shape and the tagging rules).
const (
	MaxTags           = 50
	MaxTagKeyLength   = 128
	MaxTagValueLength = 256
	// ReservedTagPrefix starts the keys AWS reserves for its own tags.
	ReservedTagPrefix = "aws:"
)

// AnnotationTags holds an object's tags as canonical JSON (sorted keys), on the Kubernetes
// path, where no API holds them.
const AnnotationTags = AnnotationPrefix + "tags"

// tagPattern is the characters SageMaker allows in tag keys and values: letters, spaces,
// digits and _ . : / = + - @.
var tagPattern = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$`)

// ValidateTags checks tags as AWS does: keys of 1-128 characters and values of at most 256,
// both of SageMaker's characters, no key in the reserved "aws:" prefix, at most 50 tags. unknown
// names the keys whose values are not known yet (only their key is checked). Problems carry
// Entry -1 and the path {attr, key}, or {attr} for the count.
func ValidateTags(attr string, tags map[string]string, unknown map[string]bool) []Problem {
	var l problemList
	keys := slices.Collect(maps.Keys(tags))
	for k := range unknown {
		if _, ok := tags[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		at := []string{attr, k}
		n := utf8.RuneCountInString(k)
		switch {
		case n < 1 || n > MaxTagKeyLength:
			l.add(-1, at, "Invalid tag key", "A tag key is 1-%d characters; got %d (%q).", MaxTagKeyLength, n, k)
		case strings.HasPrefix(strings.ToLower(k), ReservedTagPrefix):
			l.add(-1, at, "Reserved tag key", "Tag keys starting with %q are reserved for AWS's own tags; got %q. Choose another key.", ReservedTagPrefix, k)
		case !tagPattern.MatchString(k):
			l.add(-1, at, "Invalid tag key", "A tag key %s; got %q.", tagCharsRule, k)
		}
		if unknown[k] {
			continue
		}
		v := tags[k]
		if n := utf8.RuneCountInString(v); n > MaxTagValueLength {
			l.add(-1, at, "Invalid tag value", "A tag value is at most %d characters; the value of %q has %d.", MaxTagValueLength, k, n)
		} else if !tagPattern.MatchString(v) {
			l.add(-1, at, "Invalid tag value", "A tag value %s; the value of %q is %q.", tagCharsRule, k, v)
		}
	}
	return l.problems
}

const tagCharsRule = "may hold letters, spaces, digits and the characters _ . : / = + - @"

// CheckTagCount refuses more than MaxTags tags on one object: all is the tags it would carry
// (the resource's merged over the default tags). The problem is at {attr}.
func CheckTagCount(attr string, all map[string]string) []Problem {
	if len(all) <= MaxTags {
		return nil
	}
	return []Problem{{Entry: -1, Path: []string{attr}, Summary: "Too many tags", Detail: fmt.Sprintf(
		"AWS holds at most %d tags on a resource; with the provider's default_tags this one would carry %d. "+
			"Remove some, or override default tags by key instead of adding new ones.", MaxTags, len(all))}}
}

// MergeTags is the tags an object carries: defaults overridden by the resource's own tags
// (tags_all). Never nil.
func MergeTags(defaults, tags map[string]string) map[string]string {
	out := make(map[string]string, len(defaults)+len(tags))
	maps.Copy(out, defaults)
	maps.Copy(out, tags)
	return out
}

// TagChanges is what turns the tags from into to: the tags to set (new keys and changed values)
// and the keys to remove, sorted.
func TagChanges(from, to map[string]string) (set map[string]string, remove []string) {
	set = map[string]string{}
	for k, v := range to {
		if old, ok := from[k]; !ok || old != v {
			set[k] = v
		}
	}
	for k := range from {
		if _, ok := to[k]; !ok {
			remove = append(remove, k)
		}
	}
	slices.Sort(remove)
	return set, remove
}

// ResourceTags is a resource's own `tags` after a read found stored on the object (tags_all):
// the stored tags less the default tags they carry with the default's value, except keys the
// resource's own tags held before (prior), which stay its own. priorNull keeps a resource that
// configured no tags at null when nothing of its own is stored, so its plan stays empty.
func ResourceTags(stored, defaults, prior map[string]string, priorNull bool) map[string]string {
	out := map[string]string{}
	for k, v := range stored {
		_, own := prior[k]
		if d, ok := defaults[k]; ok && d == v && !own {
			continue
		}
		out[k] = v
	}
	if len(out) == 0 && priorNull {
		return nil
	}
	return out
}

// EncodeTags is tags as AnnotationTags holds them: canonical JSON (sorted keys, as
// encoding/json writes maps), "" when there are none.
func EncodeTags(tags map[string]string) string {
	if len(tags) == 0 {
		return ""
	}
	b, _ := json.Marshal(tags) // a map of strings always marshals
	return string(b)
}

// DecodeTags reads AnnotationTags; "" is no tags (nil). A value that is not a JSON object of
// strings is an error naming the annotation.
func DecodeTags(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON object of strings (%v); fix it or remove it, then apply to rewrite it", AnnotationTags, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// SetTagsAnnotation records tags in an object's annotations (AnnotationTags), none when there
// are no tags: applied with server-side apply, the provider then no longer owns the annotation
// and the server removes it.
func SetTagsAnnotation(meta *metav1.ObjectMeta, tags map[string]string) {
	if len(tags) == 0 {
		return
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[AnnotationTags] = EncodeTags(tags)
}

// TagsOf reads the tags an object records in AnnotationTags (nil when none).
func TagsOf(meta metav1.ObjectMeta) (map[string]string, error) {
	tags, err := DecodeTags(meta.Annotations[AnnotationTags])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", meta.Name, err)
	}
	return tags, nil
}
