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

	// The crawler reports each fetched page with its SimHash and its
	// links. Products share a template, so their SimHashes lie a bit or
	// two apart, but each links to other products: distinct pages.
	for i := 1; i <= 20; i++ {
		d.ObservePage(trap.Page{
			URL:         fmt.Sprintf("https://example.com/product/%d", i),
			Fingerprint: 0xfeedface ^ 1<<(i%4),
			Links: []string{
				"https://example.com/",
				fmt.Sprintf("https://example.com/product/%d", i+1),
				fmt.Sprintf("https://example.com/product/%d", 3*i),
			},
		})
	}
	// Unknown URLs all answer with one "not found" page: the same
	// template with the same links. Its pattern is stopped, and the
	// verdict that stopped it says so once.
	for _, u := range []string{"a", "b", "c", "d", "e", "f"} {
		v := d.ObservePage(trap.Page{
			URL:         "https://example.com/missing/" + u,
			Fingerprint: 0x0badf00d ^ 1<<(u[0]%3), // the page echoes the URL
			Links:       []string{"https://example.com/"},
		})
		if v.First {
			fmt.Printf("stopped %s %s (Config.%s)\n", v.Scope, v.Target, v.Setting)
		}
	}
	fmt.Println(d.JudgeAt(now, trap.Candidate{URL: "https://example.com/product/61"}))
	fmt.Println(d.JudgeAt(now, trap.Candidate{URL: "https://example.com/missing/g"}))
	// Output:
	// accepted
	// calendar: date 2031-01 is more than 2 years after 2025-11
	// repeated-segments: "docs/img" repeated 3 times in a row, limit 2
	// session-id: parameter "jsessionid"
	// stopped pattern example.com/missing/{*} (Config.ContentRepeats)
	// accepted
	// content-repetition: 5 URLs under /missing/{*} served the same page (simhash 0x000000000badf00f, same links)
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
