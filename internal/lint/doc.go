// Package lint holds checks that read the repository's own Go source; it has no code of its own.
package lint
