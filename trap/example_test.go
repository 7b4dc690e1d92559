package trap_test

import (
	"fmt"
	"time"

	"github.com/crawlkit/crawlkit/trap"
)

func Example() {
	d := trap.New(trap.Config{}) // documented defaults
	now := time.Date(2025, time.November, 21, 0, 0, 0, 0, time.UTC)

	for _, c := range []trap.Candidate{
		{URL: "https://example.com/2025/11/20/storm-hits-coast", Source: "https://example.com/"},
		{URL: "https://example.com/events/2031/01/", Source: "https://example.com/events/"},
		{URL: "https://example.com/docs/img/docs/img/docs/img/logo.png", Source: "https://example.com/docs/"},
		{URL: "https://example.com/cart;jsessionid=A1B2C3D4E5", Source: "https://example.com/"},
	} {
		fmt.Println(d.JudgeAt(now, c))
	}

	// The crawler reports each fetched page's SimHash; a pattern that
	// keeps serving the same page (a soft 404) is stopped.
	for i, u := range []string{"/", "/about", "/news", "/shop", "/contact", "/jobs"} {
		d.Observe("https://example.com"+u, uint64(i+1)*0x9e3779b97f4a7c15)
	}
	for _, u := range []string{"a", "b", "c", "d", "e"} {
		d.Observe("https://example.com/missing/"+u, 0xfeedface)
	}
	fmt.Println(d.JudgeAt(now, trap.Candidate{URL: "https://example.com/missing/f"}))
	// Output:
	// accepted
	// calendar: date 2031-01 is more than 2 years after 2025-11
	// repeated-segments: "docs/img" repeated 3 times in a row, limit 2
	// session-id: parameter "jsessionid"
	// content-repetition: 5 URLs under /missing/{*} served the same content (simhash 0x00000000feedface)
}

func ExampleConfig_trusted() {
	d := trap.New(trap.Config{
		PatternBudget: 2,
		Trusted:       map[string]trap.Budgets{"shop.example": {Pattern: 1000}},
	})
	now := time.Date(2025, time.November, 21, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= 3; i++ {
		other := d.JudgeAt(now, trap.Candidate{URL: fmt.Sprintf("https://other.example/item/%d", i)})
		trusted := d.JudgeAt(now, trap.Candidate{URL: fmt.Sprintf("https://shop.example/item/%d", i)})
		fmt.Printf("%d: %v | %v\n", i, other, trusted)
	}
	// Output:
	// 1: accepted | accepted
	// 2: accepted | accepted
	// 3: pattern-budget: /item/{n} on other.example reached its budget of 2 URLs | accepted
}
