package structured

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// Property is one <meta> property: its name, lower-cased, and content.
type Property struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// Meta is a list of properties in document order; a name may repeat
// (og:image, article:tag).
type Meta []Property

// Get returns the first value of name ("" if none).
func (m Meta) Get(name string) string {
	for _, p := range m {
		if p.Name == name {
			return p.Content
		}
	}
	return ""
}

// All returns every value of name, in order.
func (m Meta) All(name string) []string {
	var out []string
	for _, p := range m {
		if p.Name == name {
			out = append(out, p.Content)
		}
	}
	return out
}

// OpenGraph is a page's Open Graph metadata (https://ogp.me/): every
// property in Meta, and the image, video and audio arrays grouped with
// their structured properties (ogp.me "Structured Properties", "Arrays":
// og:image:width applies to the og:image before it).
type OpenGraph struct {
	Meta   `json:"properties,omitempty"`
	Images []Media `json:"images,omitempty"`
	Videos []Media `json:"videos,omitempty"`
	Audio  []Media `json:"audio,omitempty"`
}

// Media is an og:image, og:video or og:audio with its structured
// properties. Width and Height are 0 when absent or not a number.
type Media struct {
	URL       string `json:"url"`
	SecureURL string `json:"secure_url,omitempty"`
	Type      string `json:"type,omitempty"`
	Alt       string `json:"alt,omitempty"`
	Width     int    `json:"width,omitempty"`
	Height    int    `json:"height,omitempty"`
}

// ogPrefixes are the Open Graph namespaces: og: and the object types'
// (ogp.me "Object Types"), plus fb:.
var ogPrefixes = []string{"og:", "article:", "product:", "book:", "profile:", "music:", "video:", "fb:"}

// metaTag records a <meta> element's Open Graph or Twitter property. Open
// Graph names a property with the property attribute (RDFa), Twitter with
// name; pages mix them up, and both are accepted for both.
func (p *parser) metaTag(n *html.Node) {
	content, ok := attr(n, "content")
	if !ok {
		return
	}
	for _, key := range [...]string{"property", "name"} {
		v, ok := attr(n, key)
		if !ok {
			continue
		}
		for _, name := range strings.Fields(v) {
			name = strings.ToLower(name)
			var dst *Meta
			if strings.HasPrefix(name, "twitter:") {
				dst = &p.data.Twitter
			} else {
				for _, pre := range ogPrefixes {
					if strings.HasPrefix(name, pre) {
						dst = &p.data.OpenGraph.Meta
						break
					}
				}
			}
			if dst == nil {
				continue
			}
			if p.meta >= p.opts.MaxMeta {
				p.limit("MaxMeta", p.opts.MaxMeta)
				return
			}
			p.meta++
			*dst = append(*dst, Property{Name: p.str(name), Content: p.str(strings.TrimSpace(content))})
		}
		return // property wins over name
	}
}

// group builds the media arrays from the properties in order, their URLs
// resolved with resolve (ogp.me asks for absolute URLs; pages write
// relative ones too).
func (og *OpenGraph) group(resolve func(string) string) {
	for _, pr := range og.Meta {
		rest, ok := strings.CutPrefix(pr.Name, "og:")
		if !ok {
			continue
		}
		kind, sub, _ := strings.Cut(rest, ":")
		var list *[]Media
		switch kind {
		case "image":
			list = &og.Images
		case "video":
			list = &og.Videos
		case "audio":
			list = &og.Audio
		default:
			continue
		}
		// og:image starts a new element, and so does og:image:url unless
		// it repeats the URL of the last; the others describe the last one
		// (or start one if there is none).
		if sub == "" || len(*list) == 0 || sub == "url" && (*list)[len(*list)-1].URL != "" && (*list)[len(*list)-1].URL != resolve(pr.Content) {
			*list = append(*list, Media{})
		}
		m := &(*list)[len(*list)-1]
		switch sub {
		case "", "url":
			m.URL = resolve(pr.Content)
		case "secure_url":
			m.SecureURL = resolve(pr.Content)
		case "type":
			m.Type = pr.Content
		case "alt":
			m.Alt = pr.Content
		case "width":
			m.Width = atoi(pr.Content)
		case "height":
			m.Height = atoi(pr.Content)
		}
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
