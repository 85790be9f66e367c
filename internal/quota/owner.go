package quota

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AnnotationOwner records which Terraform resource owns an object: an identity the resource
// generates when it creates the object (or takes it over after an import) and keeps in its
// state as owner_id. Names are not identities: two states can declare the same quota name.
const AnnotationOwner = AnnotationPrefix + "owner-id"

// Owns reports whether the resource whose state holds owner ("" for a state written before
// owner identities existed) may manage an existing object: the object records that owner, or
// it records none and carries this provider's managed-by label (written by an earlier version;
// the state that manages it records its identity at the next apply). Labels edited by hand do
// not change ownership while the recorded identity matches.
func Owns(meta metav1.ObjectMeta, owner string) bool {
	if recorded := meta.Annotations[AnnotationOwner]; recorded != "" {
		return recorded == owner
	}
	return meta.Labels[LabelManagedBy] == ManagedByValue
}

// DescribeOwner names who manages an object, for error messages: the managing tool when it is
// not this provider, else the recorded owner identity and the quota or team it was written for.
func DescribeOwner(meta metav1.ObjectMeta) string {
	managedBy := meta.Labels[LabelManagedBy]
	switch {
	case managedBy == "":
		return "another tool (it has no " + LabelManagedBy + " label)"
	case managedBy != ManagedByValue:
		return fmt.Sprintf("%q (label %s)", managedBy, LabelManagedBy)
	}
	recorded := meta.Annotations[AnnotationOwner]
	if recorded == "" {
		return "a Terraform state using an earlier version of this provider, which recorded no owner identity"
	}
	what := ""
	if name := meta.Annotations[AnnotationName]; name != "" {
		what = fmt.Sprintf(" for compute quota %q", name)
	}
	return fmt.Sprintf("another Terraform resource (owner_id %q%s)", recorded, what)
}

// AnnotationUnconfirmed marks an object whose create finished while the Terraform run that
// asked for it was killed before it could have saved its state (OpenTofu and remote backends
// save every 20 seconds or more). The provider, still running, writes it; a later create of
// the same object adopts a marked object instead of refusing it as another resource's.
const AnnotationUnconfirmed = AnnotationPrefix + "unconfirmed-create"

// Unconfirmed reports whether an object is this provider's and marked AnnotationUnconfirmed.
func Unconfirmed(meta metav1.ObjectMeta) bool {
	return meta.Labels[LabelManagedBy] == ManagedByValue && meta.Annotations[AnnotationUnconfirmed] != ""
}
