package crawltest_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/crawlkit/crawlkit/crawltest"
)

func Example() {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 3, PagesPerHost: 10, Seed: 1})
	if err != nil {
		panic(err)
	}
	defer web.Close()

	fmt.Println(web.Seeds())
	for _, h := range web.Hosts() {
		fmt.Println(h.Name, h.Robots, h.Trap)
	}

	resp, err := web.Client().Get("http://h0000.test/robots.txt")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(string(body))

	resp, err = web.Client().Get(web.Seeds()[0])
	if err != nil {
		panic(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, strings.Contains(string(page), "<title>Welcome to h0000.test</title>"))

	rep := web.Report()
	fmt.Println(rep.Requests, rep.RobotsFetches["h0000.test"], rep.RobotsViolations)
	// Output:
	// [http://h0000.test/ http://h0001.test/ http://h0002.test/]
	// h0000.test disallow none
	// h0001.test missing calendar
	// h0002.test unavailable none
	// # robots.txt for h0000.test
	// User-agent: *
	// Disallow: /private/
	// Disallow: /tmp
	// 200 OK true
	// 2 1 0
}

func ExampleCanonical() {
	for _, u := range []string{
		"HTTP://H0042.TEST:80/%7Eteam/a%2Db-4.html#part-2",
		"http://h0042.test/shop/item?id=5&utm_source=feed&cat=maple",
		"http://h0042.test/docs/./../blog/x-9.html?",
	} {
		c, err := crawltest.Canonical(u)
		fmt.Println(c, err)
	}
	// Output:
	// http://h0042.test/~team/a-b-4.html <nil>
	// http://h0042.test/shop/item?cat=maple&id=5 <nil>
	// http://h0042.test/blog/x-9.html <nil>
}

func ExampleWeb_Truth() {
	web, err := crawltest.NewWeb(crawltest.Config{Hosts: 6, PagesPerHost: 20, NoTraps: true})
	if err != nil {
		panic(err)
	}
	defer web.Close()

	truth := web.Truth()
	p, ok := truth.Lookup("http://H0001.TEST:80/index.html")
	fmt.Println(ok, p.Depth, p.DuplicateOf)

	// Compare crawls with the truth: one that fetched every page misses
	// nothing, one that fetched only the seeds misses pages.
	fmt.Println(len(truth.Missing(truth.URLs())), len(truth.Missing(web.Seeds())) > 0)
	// Output:
	// true 1 http://h0001.test/
	// 0 true
}
