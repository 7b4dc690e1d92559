// Package kitrun runs a conformance kit from a runnable Example, where no
// *testing.T is at hand, so that each kit's Example runs the kit for real
// against its package's in-memory implementation.
package kitrun

import (
	"flag"
	"regexp"
	"testing"
)

// Run runs f as a test named name and reports whether it ran and passed.
// name should be the Example's own name: go test applies its -run pattern
// to this test too, and a pattern that selected the Example selects it.
// Verbose output is switched off while f runs, since an Example's standard
// output is compared with its Output comment; a failure's log still
// reaches standard output, and so shows in the Example's failure.
func Run(name string, f func(t *testing.T)) bool {
	if v := flag.Lookup("test.v"); v != nil {
		old := v.Value.String()
		if err := v.Value.Set("false"); err == nil {
			defer v.Value.Set(old)
		}
	}
	ran := false
	ok := testing.RunTests(regexp.MatchString, []testing.InternalTest{{
		Name: name,
		F:    func(t *testing.T) { ran = true; f(t) },
	}})
	return ran && ok
}
