package warc

// File is the part of *os.File a Writer uses to write a WARC file.
type File = osFile

// WrapFiles makes w pass every file it creates from now on through wrap, so
// tests can make file operations fail.
func WrapFiles(w *Writer, wrap func(File) File) {
	create := w.file.create
	w.file.create = func(path string) (osFile, error) {
		f, err := create(path)
		if err != nil {
			return nil, err
		}
		return wrap(f), nil
	}
}
