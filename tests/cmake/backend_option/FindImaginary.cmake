# Never finds anything: stands in for a backend whose libraries are absent.
set(Imaginary_FOUND FALSE)
set(Imaginary_NOT_FOUND_REASON "imaginary.h: Imaginary_INCLUDE_DIR-NOTFOUND")
