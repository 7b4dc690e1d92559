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
