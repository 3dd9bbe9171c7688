// Declarations only (see include/CSQLiteBundled.h); a C target needs one source file.
#include "CSQLiteBundled.h"
