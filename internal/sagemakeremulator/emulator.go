// Package sagemakeremulator is a local stand-in for the part of the SageMaker API that HyperPod
// task governance uses: compute quotas, cluster scheduler configs and DescribeCluster. Tests
// point the real aws-sdk-go-v2 SageMaker client at it (BaseEndpoint = URL()).
//
// # Wire protocol
//
// It speaks awsJson1_1 as the SDK sends it: POST / with X-Amz-Target: SageMaker.<Operation>,
// Content-Type: application/x-amz-json-1.1, a JSON body whose keys are the API model's member
// names, timestamps as epoch seconds. Errors are HTTP 4xx/5xx with {"__type": code, "Message":
// text}; the SDK resolves the code against its type registry, so ConflictException,
// ResourceLimitExceeded and ResourceNotFound arrive as the types of service/sagemaker/types and
// anything else (ValidationException, ThrottlingException, InternalFailure) as a
// smithy.GenericAPIError with that ErrorCode. A request without an Authorization header is
// refused; any SigV4 Authorization header is accepted without checking the signature.
//
// # What it enforces, and where that comes from
//
// Input constraints (required members, lengths, patterns, ranges, enumerations) are the API
// model's as the API reference pages print them; each check names its page. Behaviour that AWS
// documents is reproduced with the page in a comment. Where AWS documents nothing, the emulator
// is permissive and says so where it decides; its own choices are marked "emulator's choice".
//
// Writes are asynchronous as in the API: a create answers at once and the object is Creating,
// then Created (Updating then Updated; Deleting then gone), or CreateFailed (UpdateFailed,
// DeleteFailed) with a FailureReason. When a transition settles is set by Options.Settle.
//
// # The task-governance add-on
//
// On a real cluster the amazon-sagemaker-hyperpod-taskgovernance add-on turns these objects into
// Kueue objects. A ClusterWriter plays that part here: it is called when a transition settles and
// its error fails the transition. AWS does not publish how the add-on maps quotas onto Kueue; the
// writer of package addon, which the tests and `make demo-task-governance` plug in, uses the
// project's own mapping.
//
// # Test controls
//
// Faults (throttling, server errors before or after the operation acts, lost answers, failed
// transitions), changes made "outside Terraform", and the record of every call (for request
// counts and IAM policy checks) are in faults.go.
package sagemakeremulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Options configures an Emulator. The zero value is usable: region us-west-2, account
// 123456789012, no clusters.
type Options struct {
	Region  string
	Account string
	// Clusters are the HyperPod clusters the account has; quotas and scheduler configs can
	// only be created on these.
	Clusters []Cluster
	// Settle says when an asynchronous transition completes; nil means after two observations.
	Settle *SettleRule
	// Writer is called as the add-on would act on the cluster; nil accepts every change.
	Writer ClusterWriter
	// WriterTimeout bounds one Writer call; zero means 30 seconds.
	WriterTimeout time.Duration
	// DefaultMaxResults is the page size of a List call without MaxResults; zero means 10.
	// AWS documents no default (emulator's choice).
	DefaultMaxResults int
	// Seed makes generated IDs and the injected faults (InjectFaults) reproducible.
	Seed uint64
	// Now replaces the clock; nil means time.Now.
	Now func() time.Time
}

// SettleRule says when a Creating, Updating or Deleting object reaches its next status: once
// Describe or List has reported the transitional status Observations times, or After has passed
// since the change (when After > 0), whichever comes first. A negative Observations never
// settles by count; with both off, transitions wait for Emulator.Settle. Transitions complete
// when a Describe, a List or Settle looks at them, and the ClusterWriter runs then, so a test
// that checks the cluster without asking the API calls Settle first.
type SettleRule struct {
	Observations int
	After        time.Duration
}

var defaultSettle = SettleRule{Observations: 2}

// Cluster is a HyperPod cluster of the emulated account.
type Cluster struct {
	Name string
	// ID is the 12 characters ending the cluster's ARN; generated when empty.
	ID             string
	InstanceGroups []InstanceGroup
	// EKSClusterARN is the orchestrator's ARN DescribeCluster reports; derived from Name when empty.
	EKSClusterARN string
}

// InstanceGroup is one instance group of a cluster.
type InstanceGroup struct {
	Name         string
	InstanceType string
	Count        int32
}

// Emulator is a running SageMaker API emulator.
type Emulator struct {
	opts     Options
	settle   SettleRule
	listener net.Listener
	server   *http.Server
	created  time.Time

	// settleMu serializes Writer calls, which run without mu held.
	settleMu sync.Mutex

	mu       sync.Mutex
	rng      *rand.Rand
	clusters []clusterEntry
	quotas   *store[ComputeQuota, *ComputeQuota]
	configs  *store[ClusterSchedulerConfig, *ClusterSchedulerConfig]
	faults   faults
	calls    []Call
}

type clusterEntry struct {
	Cluster
	arn string
}

// Start listens on 127.0.0.1 (a free port) and serves until Close.
func Start(opts Options) (*Emulator, error) {
	if opts.Region == "" {
		opts.Region = "us-west-2"
	}
	if opts.Account == "" {
		opts.Account = "123456789012"
	}
	if opts.DefaultMaxResults == 0 {
		opts.DefaultMaxResults = 10
	}
	if opts.WriterTimeout == 0 {
		opts.WriterTimeout = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	e := &Emulator{
		opts:    opts,
		settle:  defaultSettle,
		rng:     rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5a6d)),
		quotas:  newStore[ComputeQuota](quotaSpec),
		configs: newStore[ClusterSchedulerConfig](schedulerConfigSpec),
	}
	if opts.Settle != nil {
		e.settle = *opts.Settle
	}
	e.created = opts.Now()
	if err := e.addClusters(opts.Clusters); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sagemaker emulator: %w", err)
	}
	e.listener = l
	e.server = &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = e.server.Serve(l) }()
	return e, nil
}

func (e *Emulator) addClusters(cs []Cluster) error {
	seen := map[string]bool{}
	for _, c := range cs {
		if !entityNamePattern.re.MatchString(c.Name) || seen[c.Name] {
			return fmt.Errorf("sagemaker emulator: cluster name %q is invalid or used twice", c.Name)
		}
		seen[c.Name] = true
		if c.ID == "" {
			c.ID = e.newID()
		}
		if !objectIDPattern.re.MatchString(c.ID) {
			return fmt.Errorf("sagemaker emulator: cluster %q: ID %q must match %s", c.Name, c.ID, objectIDPattern.shown)
		}
		if c.EKSClusterARN == "" {
			c.EKSClusterARN = fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", e.opts.Region, e.opts.Account, c.Name)
		}
		c.InstanceGroups = append([]InstanceGroup(nil), c.InstanceGroups...)
		e.clusters = append(e.clusters, clusterEntry{Cluster: c, arn: e.arn("cluster", c.ID)})
	}
	return nil
}

// URL is the endpoint to give the SDK as BaseEndpoint.
func (e *Emulator) URL() string { return "http://" + e.listener.Addr().String() }

// Region is the region the emulator serves; cluster ARNs name it.
func (e *Emulator) Region() string { return e.opts.Region }

// ClusterARN is the ARN of the cluster named name, "" when there is none.
func (e *Emulator) ClusterARN(name string) string {
	for _, c := range e.clusters {
		if c.Name == name {
			return c.arn
		}
	}
	return ""
}

// Close stops the server; requests in flight are cut.
func (e *Emulator) Close() error { return e.server.Close() }

func (e *Emulator) arn(resourceType, id string) string {
	return fmt.Sprintf("arn:aws:sagemaker:%s:%s:%s/%s", e.opts.Region, e.opts.Account, resourceType, id)
}

// newID draws 12 lowercase alphanumerics, the shape of every ID in this API. Callers hold mu
// (or run before the server starts).
func (e *Emulator) newID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	for i := range b {
		b[i] = alphabet[e.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// apiError is an error answer: HTTP status, the code the SDK reads from __type, and a message.
type apiError struct {
	status  int
	code    string
	message string
}

func (a *apiError) Error() string { return a.code + ": " + a.message }

// Errors of the API model (HTTP 400, the default for a client error without an httpError
// trait): https://docs.aws.amazon.com/sagemaker/latest/APIReference/CommonErrors.html and the
// Errors section of each operation's page.
func conflict(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "ConflictException", fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "ResourceNotFound", fmt.Sprintf(format, args...)}
}

// validationError is the code SageMaker answers malformed input with; the model does not list
// it, public reports show it (e.g. the issue quoted at violations).
func validationError(msg string) *apiError {
	return &apiError{http.StatusBadRequest, "ValidationException", msg}
}

// Common errors (https://docs.aws.amazon.com/sagemaker/latest/APIReference/CommonErrors.html).
var (
	errMissingToken = &apiError{http.StatusForbidden, "MissingAuthenticationToken",
		"The request must contain either a valid (registered) AWS access key ID or X.509 certificate."}
	errIncompleteSignature = &apiError{http.StatusBadRequest, "IncompleteSignature",
		"The request signature does not conform to AWS standards."}
	errThrottled = &apiError{http.StatusBadRequest, "ThrottlingException",
		"The request was denied due to request throttling."}
	errInternal = &apiError{http.StatusInternalServerError, "InternalFailure",
		"The request processing has failed because of an unknown error, exception or failure."}
)

func invalidAction(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "InvalidAction", fmt.Sprintf(format, args...)}
}

// messageKey is the member the error's message travels in: the model's errors name it
// "Message", the common errors "message". The SDK reads either.
func (a *apiError) messageKey() string {
	switch a.code {
	case "ConflictException", "ResourceNotFound", "ResourceLimitExceeded", "ResourceInUse":
		return "Message"
	}
	return "message"
}

// Call is one request the emulator answered.
type Call struct {
	// Operation is the X-Amz-Target's operation ("" when the header was missing).
	Operation string
	Time      time.Time
	Status    int
	// ErrorCode is the error answered, "" on success.
	ErrorCode string
	// Fault is the fault injected into this call, "" when none; a lost answer has Status 0.
	Fault FaultKind
}

// ServeHTTP answers one awsJson1_1 request.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := e.opts.Now()
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "SageMaker.")
	e.mu.Lock()
	before := e.faults.before[op]
	delete(e.faults.before, op)
	e.mu.Unlock()
	if before != nil {
		before()
	}
	out, aerr, fault := e.serve(r, op)
	call := Call{Operation: op, Time: start, Status: http.StatusOK, Fault: fault}
	switch fault {
	case FaultServerErrorAfter:
		out, aerr = nil, errInternal
	case FaultLostAnswer:
		e.loseAnswer(w, call)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-Requestid", fmt.Sprintf("%08x-emulated", start.UnixNano()&0xffffffff))
	var body []byte
	if aerr != nil {
		call.Status, call.ErrorCode = aerr.status, aerr.code
		body, _ = json.Marshal(map[string]string{"__type": aerr.code, aerr.messageKey(): aerr.message})
	} else {
		var err error
		if body, err = json.Marshal(out); err != nil {
			call.Status, call.ErrorCode = errInternal.status, errInternal.code
			body, _ = json.Marshal(map[string]string{"__type": errInternal.code, "message": err.Error()})
		}
	}
	e.mu.Lock()
	e.calls = append(e.calls, call)
	e.mu.Unlock()
	w.WriteHeader(call.Status)
	_, _ = w.Write(body)
}

// loseAnswer records call and closes its connection without an answer.
func (e *Emulator) loseAnswer(w http.ResponseWriter, call Call) {
	call.Status = 0
	e.mu.Lock()
	e.calls = append(e.calls, call)
	e.mu.Unlock()
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	panic(http.ErrAbortHandler) // no hijacking (HTTP/2): the server resets the stream
}

// serve checks the protocol, applies injected faults and runs the operation. after is a fault
// to inject once the operation has acted.
func (e *Emulator) serve(r *http.Request, op string) (_ any, _ *apiError, after FaultKind) {
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		return nil, invalidAction("awsJson1_1 requests are POST /, not %s %s", r.Method, r.URL.Path), ""
	}
	target := r.Header.Get("X-Amz-Target")
	handler, known := operations[op]
	if !strings.HasPrefix(target, "SageMaker.") || !known {
		return nil, invalidAction("X-Amz-Target %q is not an operation this emulator serves", target), ""
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.1" {
		return nil, invalidAction("Content-Type must be application/x-amz-json-1.1, not %q", ct), ""
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return nil, errMissingToken, ""
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		return nil, errIncompleteSignature, ""
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, validationError("cannot read the request body: " + err.Error()), ""
	}
	switch fault := e.injectedFault(op, body); fault {
	case FaultThrottle:
		return nil, errThrottled, fault
	case FaultServerErrorBefore:
		return nil, errInternal, fault
	default:
		after = fault
	}
	ctx := context.WithoutCancel(r.Context())
	out, aerr := handler(e, ctx, body)
	return out, aerr, after
}

// decode reads a request body into in; a body that does not fit the shape is a
// ValidationException (emulator's choice of code: AWS documents none for it).
func decode(body []byte, in any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	if err := json.Unmarshal(body, in); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return validationError(fmt.Sprintf("Value at '%s' is not a valid %s", memberPath(typeErr.Field), typeErr.Type))
		}
		return validationError("the request body is not valid JSON: " + err.Error())
	}
	return nil
}

// memberPath is a decoding error's field path in the API's member names. encoding/json puts the
// Go names of embedded structs in it (createInput: the members inputs share); those start in
// lower case, every member of the API in upper case.
func memberPath(field string) string {
	names := strings.Split(field, ".")
	return strings.Join(slices.DeleteFunc(names, func(n string) bool { return n != "" && unicode.IsLower(rune(n[0])) }), ".")
}

// Calls returns the calls answered since Start or the last ResetCalls, in order.
func (e *Emulator) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Call(nil), e.calls...)
}

// CallCounts counts the recorded calls per operation.
func (e *Emulator) CallCounts() map[string]int {
	counts := map[string]int{}
	for _, c := range e.Calls() {
		counts[c.Operation]++
	}
	return counts
}

// IAMActions lists, sorted, the IAM actions ("sagemaker:<Operation>") of the operations called,
// so that a test can check them against a policy.
func (e *Emulator) IAMActions() []string {
	var actions []string
	for op := range e.CallCounts() {
		if _, known := operations[op]; known {
			actions = append(actions, "sagemaker:"+op)
		}
	}
	sort.Strings(actions)
	return actions
}

// ResetCalls forgets the recorded calls.
func (e *Emulator) ResetCalls() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = nil
}
