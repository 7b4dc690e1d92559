package main

import (
	"encoding/base64"
	"fmt"

	"github.com/crawlkit/crawlkit/robots"
)

// robotsCase is one case of robots.json (the schema is described in the README of the conformance data directory).
type robotsCase struct {
	ID           string  `json:"id"`
	Source       string  `json:"source"`
	Category     string  `json:"category"`
	Spec         string  `json:"spec"`
	Note         string  `json:"note"`
	RobotsTxt    *string `json:"robots_txt"`
	RobotsTxtB64 string  `json:"robots_txt_b64"`
	UserAgent    string  `json:"user_agent"`
	URL          string  `json:"url"`
	Allowed      bool    `json:"allowed"`
}

func init() {
	register("robots", runRobots)
}

func runRobots(data []byte) ([]result, error) {
	cases, err := decodeCases[robotsCase](data)
	if err != nil {
		return nil, err
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		results = append(results, runRobotsCase(c))
	}
	return results, nil
}

// runRobotsCase evaluates one case: "rfc9309" cases with the package
// defaults, "google-extension" cases with the Google extensions on.
func runRobotsCase(c robotsCase) result {
	var body []byte
	switch {
	case c.RobotsTxt != nil:
		body = []byte(*c.RobotsTxt)
	case c.RobotsTxtB64 != "":
		b, err := base64.StdEncoding.DecodeString(c.RobotsTxtB64)
		if err != nil {
			return result{id: c.ID, detail: fmt.Sprintf("case robots_txt_b64 does not decode: %v", err)}
		}
		body = b
	}
	var opts robots.Config
	switch c.Spec {
	case "rfc9309":
	case "google-extension":
		opts.GoogleExtensions = true
	default:
		return result{id: c.ID, detail: "unknown spec " + quote(c.Spec)}
	}
	d, err := opts.Parse(body).Allowed(c.UserAgent, c.URL)
	if err != nil {
		return result{id: c.ID, detail: fmt.Sprintf("expected allowed=%v, got %s", c.Allowed, quote(err))}
	}
	if d.Allowed != c.Allowed {
		return result{id: c.ID, detail: fmt.Sprintf("expected allowed=%v, got allowed=%v (%s; %s) [%s]",
			c.Allowed, d.Allowed, d.Reason, d.Rule, c.Category)}
	}
	return result{id: c.ID, ok: true}
}
