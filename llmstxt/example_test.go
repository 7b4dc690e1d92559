package llmstxt_test

import (
	"fmt"

	"github.com/crawlkit/crawlkit/llmstxt"
)

func Example() {
	f := llmstxt.Parse([]byte(`# FastHTML

> FastHTML is a python library for building web applications.

## Docs

- [Quick start](https://example.com/quickstart.md): A brief overview
- [Reference](/docs/ref.md)

## Optional

- [Starlette docs](https://example.com/starlette.md)
`))
	fmt.Printf("%s: %s\n", f.Title, f.Summary)
	for _, l := range f.Links {
		fmt.Printf("%s | %s | %s | %q\n", l.Section, l.Title, l.URL, l.Notes)
	}
	// Output:
	// FastHTML: FastHTML is a python library for building web applications.
	// Docs | Quick start | https://example.com/quickstart.md | "A brief overview"
	// Docs | Reference | /docs/ref.md | ""
	// Optional | Starlette docs | https://example.com/starlette.md | ""
}
