package main

import (
	"fmt"

	"github.com/crawlkit/crawlkit/urlnorm"
)

// resolveCase is one case of resolve.json (the schema is described in the README of the conformance data directory).
type resolveCase struct {
	ID       string   `json:"id"`
	Source   string   `json:"source"`
	Category string   `json:"category"`
	Note     string   `json:"note"`
	Tags     []string `json:"tags"`
	Base     string   `json:"base"`
	Ref      string   `json:"ref"`
	Expected string   `json:"expected"`
}

func init() {
	register("resolve", runResolve)
}

func runResolve(data []byte) ([]result, error) {
	cases, err := decodeCases[resolveCase](data)
	if err != nil {
		return nil, err
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		got, err := urlnorm.ResolveString(c.Base, c.Ref)
		switch {
		case err != nil:
			results = append(results, result{id: c.ID, detail: fmt.Sprintf("expected %s, got %s", quote(c.Expected), quote(err))})
		case got != c.Expected:
			results = append(results, result{id: c.ID, detail: fmt.Sprintf("expected %s, got %s", quote(c.Expected), quote(got))})
		default:
			results = append(results, result{id: c.ID, ok: true})
		}
	}
	return results, nil
}
