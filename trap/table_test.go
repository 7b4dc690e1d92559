package trap

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected verdicts in testdata")

// TestVerdictTable walks the files in testdata: sequences of judgements and
// content reports, each with the verdict it must get. A line is one of
//
//	new [Field=value ...]                 a new Detector with these Config fields
//	judge URL [from SOURCE] [depth N] => VERDICT
//	page URL FINGERPRINT [LINK ...] => VERDICT   (ObservePage)
//	observe URL FINGERPRINT => VERDICT           (Observe)
//
// and VERDICT is "accepted" or the reason followed by [scope target first
// setting] as fmtVerdict writes it. In a URL, <TEXT*N> stands for TEXT
// repeated N times and <sp> for a space. A rejection's reason must start with its rule's name. Run with -update to rewrite the
// verdicts after a deliberate change, and review the diff.
func TestVerdictTable(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runTable(t, file) })
	}
}

func runTable(t *testing.T, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var d *Detector
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		cmd, want, hasWant := strings.Cut(text, " => ")
		fields := strings.Fields(cmd)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			out = append(out, text)
			continue
		}
		var v Verdict
		switch fields[0] {
		case "new":
			d = New(parseConfig(t, file, line, fields[1:]))
			out = append(out, text)
			continue
		case "judge":
			c := Candidate{URL: expand(fields[1])}
			for i := 2; i+1 < len(fields); i += 2 {
				switch fields[i] {
				case "from":
					c.Source = expand(fields[i+1])
				case "depth":
					n, err := strconv.Atoi(fields[i+1])
					if err != nil {
						t.Fatalf("%s:%d: depth: %v", file, line, err)
					}
					c.Depth = n
				default:
					t.Fatalf("%s:%d: unknown judge argument %q", file, line, fields[i])
				}
			}
			if len(fields)%2 != 0 {
				t.Fatalf("%s:%d: judge URL [from SOURCE] [depth N]", file, line)
			}
			v = d.JudgeAt(now, c)
		case "page", "observe":
			fp, err := strconv.ParseUint(fields[2], 0, 64)
			if err != nil {
				t.Fatalf("%s:%d: fingerprint: %v", file, line, err)
			}
			if fields[0] == "observe" {
				v = d.Observe(fields[1], fp)
			} else {
				v = d.ObservePage(Page{URL: fields[1], Fingerprint: fp, Links: fields[3:]})
			}
		default:
			t.Fatalf("%s:%d: unknown command %q", file, line, fields[0])
		}
		if v.Rejected() && !strings.HasPrefix(v.Reason, string(v.Rule)+": ") {
			t.Errorf("%s:%d: reason %q does not start with the rule name %q", file, line, v.Reason, v.Rule)
		}
		got := fmtVerdict(v)
		out = append(out, cmd+" => "+got)
		if !*update && (!hasWant || got != want) {
			t.Errorf("%s:%d: %s\n got: %s\nwant: %s", file, line, cmd, got, want)
		}
	}
	f.Close()
	if *update {
		if err := os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var repeat = regexp.MustCompile(`<([^<>*]+)\*([0-9]+)>`)

// expand replaces each <TEXT*N> in s with TEXT repeated N times, and each
// <sp> with a space.
func expand(s string) string {
	s = strings.ReplaceAll(s, "<sp>", " ")
	return repeat.ReplaceAllStringFunc(s, func(m string) string {
		sub := repeat.FindStringSubmatch(m)
		n, _ := strconv.Atoi(sub[2])
		return strings.Repeat(sub[1], n)
	})
}

// fmtVerdict writes a verdict for the table: the reason, then what it
// stops, whether it is the first, and the setting.
func fmtVerdict(v Verdict) string {
	if !v.Rejected() {
		return "accepted"
	}
	var b strings.Builder
	b.WriteString(v.Reason + " [" + v.Scope.String())
	if v.Target != "" {
		b.WriteString(" " + v.Target)
	}
	if v.First {
		b.WriteString(" first")
	}
	if v.Setting != "" {
		b.WriteString(" " + v.Setting)
	}
	b.WriteString("]")
	return b.String()
}

// parseConfig sets the named int and bool fields of a Config.
func parseConfig(t *testing.T, file string, line int, args []string) Config {
	var c Config
	rv := reflect.ValueOf(&c).Elem()
	for _, a := range args {
		name, val, _ := strings.Cut(a, "=")
		f := rv.FieldByName(name)
		switch {
		case !f.IsValid():
			t.Fatalf("%s:%d: no Config field %q", file, line, name)
		case f.Kind() == reflect.Int:
			n, err := strconv.Atoi(val)
			if err != nil {
				t.Fatalf("%s:%d: %s: %v", file, line, name, err)
			}
			f.SetInt(int64(n))
		case f.Kind() == reflect.Bool:
			f.SetBool(val == "true")
		default:
			t.Fatalf("%s:%d: cannot set %s", file, line, name)
		}
	}
	return c
}
