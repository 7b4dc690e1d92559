// Command apicount counts the exported identifiers of the module's public
// packages, so that issue #26 ("a smaller, uniform surface") has figures to
// compare before and after a change instead of impressions.
//
// It parses the non-test .go files of every package under the module root
// except internal/, examples/, testdata/ and bench/ (a separate module), and
// prints, per package:
//
//	top     exported top-level identifiers: types, funcs, vars, consts
//	all     top plus the exported methods of exported types, the exported
//	        fields of exported struct types (embedded ones too) and the
//	        methods of exported interfaces
//	fields  the exported fields of the package's type named Config, if any
//
// Usage, from the module root:
//
//	go run ./internal/tools/apicount [-v] [dir]
//
// -v lists the identifiers too.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type pkgCount struct {
	path         string
	top, all     int
	configFields int
	names        []string
}

func main() {
	verbose := flag.Bool("v", false, "list the identifiers counted")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") ||
				base == "testdata" || base == "internal" || base == "examples" || base == "bench") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			dirs[filepath.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(1)
	}
	var out []pkgCount
	for dir := range dirs {
		c, ok, err := count(root, dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "apicount:", err)
			os.Exit(1)
		}
		if ok {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	var top, all int
	fmt.Printf("%-22s %5s %5s %7s\n", "package", "top", "all", "Config")
	for _, c := range out {
		cf := "-"
		if c.configFields >= 0 {
			cf = fmt.Sprint(c.configFields)
		}
		fmt.Printf("%-22s %5d %5d %7s\n", c.path, c.top, c.all, cf)
		if *verbose {
			for _, n := range c.names {
				fmt.Println("\t" + n)
			}
		}
		top += c.top
		all += c.all
	}
	fmt.Printf("%-22s %5d %5d   (%d packages)\n", "total", top, all, len(out))
}

func count(root, dir string) (pkgCount, bool, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.SkipObjectResolution)
	if err != nil {
		return pkgCount{}, false, err
	}
	rel, _ := filepath.Rel(root, dir)
	c := pkgCount{path: filepath.ToSlash(rel), configFields: -1}
	if c.path == "." {
		c.path = "(root)"
	}
	found := false
	for name, pkg := range pkgs {
		if name == "main" {
			continue
		}
		found = true
		// Exported type names first, so methods and fields of unexported
		// types are left out.
		exportedTypes := map[string]bool{}
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
					for _, s := range gd.Specs {
						if ts := s.(*ast.TypeSpec); ts.Name.IsExported() {
							exportedTypes[ts.Name.Name] = true
						}
					}
				}
			}
		}
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						c.top++
						c.all++
						c.names = append(c.names, "func "+d.Name.Name)
						continue
					}
					if recv := recvName(d.Recv.List[0].Type); exportedTypes[recv] {
						c.all++
						c.names = append(c.names, "method "+recv+"."+d.Name.Name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									c.top++
									c.all++
									c.names = append(c.names, d.Tok.String()+" "+n.Name)
								}
							}
						case *ast.TypeSpec:
							if !s.Name.IsExported() {
								continue
							}
							c.top++
							c.all++
							c.names = append(c.names, "type "+s.Name.Name)
							members := exportedMembers(s.Type)
							c.all += len(members)
							for _, m := range members {
								c.names = append(c.names, "member "+s.Name.Name+"."+m)
							}
							if s.Name.Name == "Config" {
								c.configFields = len(members)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(c.names)
	return c, found, nil
}

func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// exportedMembers lists a struct's exported fields (an embedded field by its
// type's name) or an interface's exported methods.
func exportedMembers(e ast.Expr) []string {
	var list *ast.FieldList
	switch t := e.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list = t.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range list.List {
		if len(f.Names) == 0 {
			if n := recvName(f.Type); n != "" && ast.IsExported(n) {
				if _, sel := f.Type.(*ast.SelectorExpr); !sel {
					out = append(out, n)
				}
			} else if s, ok := f.Type.(*ast.SelectorExpr); ok && s.Sel.IsExported() {
				out = append(out, s.Sel.Name)
			} else if s, ok := f.Type.(*ast.StarExpr); ok {
				if sx, ok := s.X.(*ast.SelectorExpr); ok && sx.Sel.IsExported() {
					out = append(out, sx.Sel.Name)
				}
			}
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() {
				out = append(out, n.Name)
			}
		}
	}
	return out
}
