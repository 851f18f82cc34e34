#pragma once
// write_file_atomically() lives with the other text and file helpers in core/text_util.h.
#include "core/text_util.h"
