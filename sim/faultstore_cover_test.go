package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"

	"github.com/nextup-dev/nextup"
)

// TestFaultTxCoversTx: faultTx embeds the real Tx, so a method added to
// nextup.Tx would pass straight through it uncounted and never fail. Every
// method of the interface must have its own override.
func TestFaultTxCoversTx(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "faultstore.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
			continue
		}
		if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
			if id, ok := star.X.(*ast.Ident); ok && id.Name == "faultTx" {
				own[fd.Name.Name] = true
			}
		}
	}
	tx := reflect.TypeFor[nextup.Tx]()
	for i := range tx.NumMethod() {
		if m := tx.Method(i).Name; !own[m] {
			t.Errorf("faultTx does not override nextup.Tx.%s: faults can never hit it", m)
		}
	}
}
