package quota

import (
	"fmt"
	"strconv"
	"strings"
)

// Problem is a plan-time error in a Config.
type Problem struct {
	// Entry is the index into Config.Resources the problem belongs to, or -1 for attributes
	// outside resources (including resource_sharing).
	Entry int
	// Path is the attribute path below the entry (e.g. {"accelerator_partition", "type"}), or
	// below the root when Entry is -1 (e.g. {"resource_sharing", "borrow_limit"} or
	// {"resource_sharing", "absolute_borrow_limits", "0", "vcpu"}). Empty means the entry itself.
	Path []string
	// Summary is short; Detail says what is wrong and how to fix it.
	Summary string
	Detail  string
}

// Error renders the problem with a Terraform-style attribute path.
func (p Problem) Error() string {
	var b strings.Builder
	if p.Entry >= 0 {
		fmt.Fprintf(&b, "resources[%d]", p.Entry)
	}
	for _, s := range p.Path {
		if _, err := strconv.Atoi(s); err == nil {
			fmt.Fprintf(&b, "[%s]", s)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	return b.String() + p.Summary + ": " + p.Detail
}

// quoteList renders ["a","b","c"] as `"a", "b" or "c"`.
func quoteList(items []string, conj string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = strconv.Quote(s)
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}

// problemList collects the problems of one check.
type problemList struct {
	problems []Problem
}

func (l *problemList) add(entry int, path []string, summary, format string, args ...any) {
	l.problems = append(l.problems, Problem{Entry: entry, Path: path, Summary: summary, Detail: fmt.Sprintf(format, args...)})
}
