package usage_test

import (
	"fmt"
	"net/http"

	"github.com/crawlkit/crawlkit/robots"
	"github.com/crawlkit/crawlkit/usage"
)

func Example() {
	// robots.txt says train-ai=n for the site, train-ai=y under /ai-ok/
	// (draft-ietf-aipref-attach §3.4), and Content-Signal says search=yes.
	rules := robots.ParseString(`User-Agent: *
Allow: /
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Signal: search=yes, ai-input=yes
`)
	a, _ := rules.Agent("ExampleBot")
	for _, target := range []string{"https://example.com/ai-ok/page", "https://example.com/page"} {
		c := usage.Collector{Token: "ExampleBot"}
		for _, cu := range a.ContentUsage(target) {
			st, _ := usage.ParseContentUsage(cu.Preference)
			c.Add(usage.KindRobotsContentUsage, cu.Preference, st)
		}
		for _, cs := range a.ContentSignals() {
			c.Add(usage.KindRobotsContentSignal, cs.Value, usage.ParseContentSignal(cs.Value))
		}
		// The page's own header narrows what robots.txt said.
		c.AddHeader(http.Header{"X-Robots-Tag": {"noimageai"}, "Content-Usage": {"search=n"}})
		s := c.Signals()
		fmt.Println(target)
		fmt.Println("  search:", s.Search, " train-ai:", s.AITraining, " ai-input:", s.AIInput, " noimageai:", s.NoImageAI)
	}
	// Output:
	// https://example.com/ai-ok/page
	//   search: disallowed  train-ai: allowed  ai-input: allowed  noimageai: true
	// https://example.com/page
	//   search: disallowed  train-ai: disallowed  ai-input: allowed  noimageai: true
}
