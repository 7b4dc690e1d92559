// Command scrape runs the catalogue scraper written with crawlkit
// (examples/scrape) and with colly (bench/scrape/colly) against the same
// local shop (examples/scrape/shop), one after the other on a fresh shop
// each, and prints a table: lines of code, products right, and the shop's
// own account of robots.txt and Crawl-delay.
//
//	cd bench && go run ./scrape
package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/crawlkit/crawlkit/examples/scrape/shop"
)

func main() {
	delay := flag.Duration("crawl-delay", 100*time.Millisecond, "the shop's robots.txt Crawl-delay")
	flag.Parse()
	dir, err := os.MkdirTemp("", "scrape")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	type scraper struct {
		name, pkg, src string
		args           []string
	}
	scrapers := []scraper{
		// crawlkit's address guard refuses loopback unless told.
		{"crawlkit (examples/scrape/scrape.go)", "github.com/crawlkit/crawlkit/examples/scrape", "../examples/scrape/scrape.go", []string{"-allow-private", "127.0.0.0/8"}},
		{"colly v2.3.0 (bench/scrape/colly)", "./scrape/colly", "scrape/colly/main.go", nil},
	}
	fmt.Println("| scraper | lines | products right | of | wall s | cart requests (disallowed) | requests sooner than Crawl-delay | shortest gap |")
	fmt.Println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for i, s := range scrapers {
		bin := filepath.Join(dir, fmt.Sprint(i))
		if out, err := exec.Command("go", "build", "-o", bin, s.pkg).CombinedOutput(); err != nil {
			log.Fatalf("building %s: %v\n%s", s.name, err, out)
		}
		sh, err := shop.Start(shop.Config{CrawlDelay: *delay})
		if err != nil {
			log.Fatal(err)
		}
		// Both are asked for the same 10 ms between requests; the shop's
		// robots.txt asks for more.
		args := append([]string{"-delay", "10ms"}, s.args...)
		cmd := exec.Command(bin, append(args, sh.Seeds()...)...)
		cmd.Stderr = os.Stderr
		start := time.Now()
		out, err := cmd.Output()
		wall := time.Since(start)
		sh.Close()
		if err != nil {
			log.Fatalf("%s: %v", s.name, err)
		}
		right := 0
		rows, _ := csv.NewReader(bytes.NewReader(out)).ReadAll()
		got := map[string]string{}
		for _, r := range rows {
			if len(r) == 3 {
				got[r[0]] = r[1] + "|" + r[2]
			}
		}
		want := sh.Products()
		for _, p := range want {
			if got[p.URL] == p.Title+"|"+p.Price {
				right++
			}
		}
		rep := sh.Report()
		fmt.Printf("| %s | %d | %d | %d | %.1f | %d | %d | %v |\n", s.name, codeLines(s.src), right, len(want), wall.Seconds(),
			rep.RobotsViolations, rep.TooSoon, rep.MinGap.Round(time.Millisecond))
	}
}

// codeLines counts the lines of a Go file that are neither blank nor
// comments.
func codeLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "//") {
			n++
		}
	}
	return n
}
