package web

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
)

// The pages' scripts and style sheets are files, not inline: the pages'
// Content-Security-Policy (secure.go) allows scripts and styles from
// nextup's own origin only, so no injected markup can run or restyle a
// page. Each is served at /static/{hash}/{name}, the hash of its content
// in the URL: a page always asks for the version it was rendered with,
// and a browser may keep it for a year.
//
//go:embed static/*.css static/*.js
var staticFS embed.FS

// staticHashes is each static file's content hash (12 hex digits),
// computed once at start-up.
var staticHashes = func() map[string]string {
	m := map[string]string{}
	entries, err := fs.ReadDir(staticFS, "static")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := staticFS.ReadFile("static/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		m[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return m
}()

// assetURL is the URL of a static file, for the templates ({{asset
// "staff.css"}}). An unknown name is a bug in a template: it panics at
// the first render, which every page's test reaches.
func assetURL(name string) string {
	h, ok := staticHashes[name]
	if !ok {
		panic("web: no static file " + name)
	}
	return "/static/" + h + "/" + name
}

// pageFuncs are the functions every page's templates may call.
var pageFuncs = template.FuncMap{"asset": assetURL}

// parsePage parses a page's template files with pageFuncs, once at
// start-up.
func parsePage(files ...string) *template.Template {
	return template.Must(template.New(path.Base(files[0])).Funcs(pageFuncs).ParseFS(templateFS, files...))
}

// serveStatic is GET /static/{hash}/{name}. The current hash is cached
// for a year (immutable); another hash (a page rendered before a
// deploy) still gets the current file, revalidated every time.
func serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	want, ok := staticHashes[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := staticFS.ReadFile("static/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	h.Set("Cache-Control", "no-cache")
	if r.PathValue("hash") == want {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	h.Set("ETag", `"`+want+`"`)
	if r.Header.Get("If-None-Match") == `"`+want+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b)
}
