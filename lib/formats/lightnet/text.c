/* LightNet's comment pre-pass over the IR text. */
#include "lightnet.h"

bool ln_strip_comments(char *text, size_t len, size_t *bad)
{
    size_t i = 0;
    while (i < len) {
        char c = text[i];
        if (c == '"') {
            /* LightNet skips to the next quote, ignoring backslashes. */
            i++;
            while (i < len && text[i] != '"')
                i++;
            i++;
        } else if (c == '/' && i + 1 < len && text[i + 1] == '/') {
            while (i < len && text[i] != '\n')
                text[i++] = ' ';
        } else if (c == '/' && i + 1 < len && text[i + 1] == '*') {
            size_t start = i;
            text[i++] = ' ';
            text[i++] = ' ';
            for (;;) {
                if (i + 1 >= len) {
                    *bad = start;
                    return false;
                }
                if (text[i] == '*' && text[i + 1] == '/') {
                    text[i++] = ' ';
                    text[i++] = ' ';
                    break;
                }
                if (text[i] != '\n')
                    text[i] = ' ';
                i++;
            }
        } else {
            i++;
        }
    }
    return true;
}
