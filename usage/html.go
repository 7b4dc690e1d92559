package usage

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// maxHTMLScan bounds the octets of a page read for its <meta> elements,
// which belong in the head (draft-illyes-repext §4 advises reading only
// those); maxMeta bounds the elements kept.
const (
	maxHTMLScan  = 256 << 10
	maxHTMLToken = 64 << 10
	maxMeta      = 64
)

// HTMLSignals are the usage signals of an HTML page's <meta> elements.
type HTMLSignals struct {
	// Robots are the directives of <meta name="robots"> and <meta
	// name="TOKEN">, united (draft-illyes-repext §3.1.2); RobotsContent
	// their content attributes, joined with ", ".
	Robots        Directives
	RobotsContent string
	// TDM is the TDMRep declaration of <meta name="tdm-reservation"> and
	// <meta name="tdm-policy"> (TDMRep §3.3).
	TDM TDM
}

// ParseHTML reads the <meta> elements of an HTML page's head: it stops at
// the first <body> start tag, </head> end tag or other content element
// past the head, after maxHTMLScan octets, or at a token longer than
// maxHTMLToken octets. token is the crawler's product token.
func ParseHTML(body []byte, token string) HTMLSignals {
	var out HTMLSignals
	if len(body) > maxHTMLScan {
		body = body[:maxHTMLScan]
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	z.SetMaxBuf(maxHTMLToken)
	var robots []string
	var reservation, policy string
	metas := 0
	for metas < maxMeta {
		switch z.Next() {
		case html.ErrorToken:
			goto done
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "head" {
				goto done
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "body", "p", "div", "main", "article", "section", "h1":
				goto done
			case "meta":
			default:
				continue
			}
			metas++
			var mname, content string
			hasContent := false
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "name":
					mname = strings.ToLower(strings.TrimSpace(string(v)))
				case "content":
					content, hasContent = string(v), true
				}
			}
			if !hasContent {
				continue
			}
			switch {
			case mname == "robots" || token != "" && mname == strings.ToLower(token):
				out.Robots.merge(ParseMetaRobots(content))
				robots = append(robots, strings.TrimSpace(content))
			case mname == "tdm-reservation":
				reservation = content
			case mname == "tdm-policy":
				policy = content
			}
		}
	}
done:
	out.RobotsContent = strings.Join(robots, ", ")
	out.TDM = newTDM(reservation, policy)
	return out
}
