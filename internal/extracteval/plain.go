package main

import (
	"html"
	"regexp"
	"strings"
	"unicode"
)

var (
	reRefDef   = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s.*$`)
	reImg      = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	reLinkRef  = regexp.MustCompile(`\[([^\]]*)\]\[[^\]]*\]`)
	reLinkInl  = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	reLead     = regexp.MustCompile(`(?m)^[ \t]*(?:>[ \t]?)*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d+[.)][ \t]+)?`)
	reFence    = regexp.MustCompile("(?m)^[ \t]*(```+|~~~+).*$")
	reRule     = regexp.MustCompile(`(?m)^[ \t]*(?:[-*_][ \t]*){3,}$`)
	reTableSep = regexp.MustCompile(`(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$`)
	reEsc      = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)
)

// plain returns the text a reader of Markdown sees, for scoring: the
// reference list, link and image syntax, block markers, table pipes and
// emphasis delimiters go; escaped characters and entities become what
// they stand for. Images are dropped: their alt text is not shown text.
func plain(md string) string {
	// Escaped punctuation is text: park it in a private-use block, away
	// from the syntax rules below.
	s := reEsc.ReplaceAllStringFunc(md, func(m string) string { return string(rune(0xF000 + int(m[1]))) })
	s = reRefDef.ReplaceAllString(s, "")
	s = reFence.ReplaceAllString(s, "")
	s = reRule.ReplaceAllString(s, "")
	s = reTableSep.ReplaceAllString(s, "")
	s = reImg.ReplaceAllString(s, "")
	s = reLinkRef.ReplaceAllString(s, "$1")
	s = reLinkInl.ReplaceAllString(s, "$1")
	s = reLead.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "|", " ")
	s = stripDelims(s)
	s = strings.Map(func(r rune) rune {
		if r >= 0xF000 && r < 0xF080 {
			return r - 0xF000
		}
		return r
	}, s)
	return html.UnescapeString(s)
}

// stripDelims drops runs of emphasis and code delimiters that touch a
// word on one side only: "**bold**" is bold, "snake_case" is a word.
func stripDelims(s string) string {
	rs := []rune(s)
	word := func(i int) bool { return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) }
	var b strings.Builder
	for i := 0; i < len(rs); {
		if !isDelim(rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && isDelim(rs[j]) {
			j++
		}
		if word(i-1) && word(j) {
			b.WriteString(string(rs[i:j]))
		}
		i = j
	}
	return b.String()
}

func isDelim(r rune) bool { return r == '*' || r == '_' || r == '`' || r == '~' }
