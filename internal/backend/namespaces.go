package backend

import "context"

// NamespaceList lists the store's team namespaces.
type NamespaceList interface {
	// List hands the namespaces of the teams whose name starts with teamPrefix to page, one page
	// of the store's list at a time, each as Get reads it with Team and NotRepresented set. An
	// error from page ends the listing and is returned.
	List(ctx context.Context, teamPrefix string, page func([]*TeamNamespace) error) error
}

// TeamNamespaces reads, writes and deletes the namespace of each team and the queue in it that
// feeds the team's quota: their lifecycle.
type TeamNamespaces interface {
	// Get reads the team's namespace and, when it exists, its queue; nil when there is no namespace.
	Get(ctx context.Context, team string) (*TeamNamespace, error)
	// Claim creates the team's namespace holding only the owner identity, so that of two
	// creators only one succeeds: a namespace that exists already fails with ErrExists.
	Claim(ctx context.Context, team, owner string) error
	// WaitGone waits until the team's namespace, being deleted, is gone.
	WaitGone(ctx context.Context, team string) error
	// Adopt removes the mark an interrupted run left on ns (see Record.Unconfirmed).
	Adopt(ctx context.Context, ns *TeamNamespace) error
	// Put writes the namespace with the user's labels and annotations beside the provider's own
	// and the owner identity ("" records none), then its queue. current is the namespace as last
	// read (nil when there was none): a queue in it that cannot be changed into the one wanted is
	// deleted first. A failure is a RequestError naming the object it was writing, with OpDelete
	// when it was deleting that queue.
	Put(ctx context.Context, team string, labels, annotations map[string]string, owner string, current *TeamNamespace) error
	// Delete deletes the queue, then the namespace, waiting until each is gone; a failure is a
	// RequestError naming the object, ErrStillExists when it was not gone in time.
	Delete(ctx context.Context, team string) error
}

// NamespaceDetails says what runs in a team's namespace and what of it the resource's
// attributes do not show.
type NamespaceDetails interface {
	// Work counts what still runs in the team's namespace: the Pods that have not finished and the
	// workloads. A failed list says which permission it needs.
	Work(ctx context.Context, team string) (pods, workloads int, err error)
	// Drift lists how ns and its queue differ from what owner writes, apart from the user's
	// labels and annotations (attributes show those). A namespace another store read is an error.
	Drift(ns *TeamNamespace, team, owner string) ([]string, error)
	// Imported are the labels and annotations an import of ns takes into the configuration. A
	// namespace another store read is an error.
	Imported(ns *TeamNamespace) (labels, annotations map[string]string, err error)
}

// TeamNamespace is a team's namespace as stored.
type TeamNamespace struct {
	Record
	// Labels and Annotations are all the namespace carries, whoever set them.
	Labels, Annotations map[string]string
	// Queue is the namespace's queue; nil when it does not exist.
	Queue *TeamQueue
	// LocalQueueName and ClusterQueueName are what the namespace records of its queue: the
	// queue's name and the team quota's queue it feeds; "" when it records none (no queue, or
	// one being deleted). Where someone else creates the team's queue with its quota (the
	// task-governance add-on), they are the names it gets, whether or not it exists yet: the
	// provider never writes or compares that queue.
	LocalQueueName, ClusterQueueName string
	// Team and NotRepresented (what an apply would change in the namespace or its queue beyond
	// taking them over, in the store's words) are set by List.
	Team           string
	NotRepresented []string
	// Native is the backend's own object, for its own use: a backend handed a record of another
	// store's returns an error.
	Native any
}

// TeamQueue is the queue in a team's namespace.
type TeamQueue struct {
	Record
	// ClusterQueue names the team quota's queue that it feeds.
	ClusterQueue string
	// Native is the backend's own object, for its own use.
	Native any
}
