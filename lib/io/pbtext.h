/* Protobuf text format over protobuf-c descriptors (any message type).
 *
 * Parsing accepts what Python's google.protobuf.text_format.Merge accepts
 * and the looser dialect of Neural Network Console: optional ':' before a
 * sub-message, '{...}' or '<...>', fields in any order, ',' or ';' after a
 * field, '#' comments, '[a, b]' lists for repeated fields (also of
 * messages), booleans true/false/True/False/t/f/1/0, integers in float
 * fields, inf/nan, a trailing 'f' on floats, decimal/hex/octal integers,
 * enums by name or number, single or double quoted strings with C escapes
 * (\n \t \r \\ \' \" \? \a \b \f \v, octal, \xHH, \uXXXX, \UXXXXXXXX),
 * adjacent strings concatenated.  Merge semantics: repeated fields append,
 * a singular scalar is replaced, a singular sub-message is merged into.
 * A field the message type does not have (a file from a newer version of
 * the schema) is skipped without knowing its type ("name: scalar", "name:
 * [...]", "name {...}", "name: {...}") and kept on its message as text: an
 * unknown field with tag 0 whose data is the field's text with whitespace
 * and comments outside strings collapsed to single spaces.  The printer
 * writes such fields back, after the known ones, as that text.
 * Errors carry "line L:C" (1-based, columns in bytes) as their location:
 * GIR_E_SYNTAX for malformed text, GIR_E_SCHEMA for a
 * value of the wrong type or out of range, two members of one oneof, or a
 * string that is not UTF-8 or holds a NUL byte; GIR_E_LIMIT for nesting
 * deeper than GIR_PBTEXT_MAX_DEPTH (protobuf's own limit) or the max-depth limit
 * (core/limits.h) when that is lower.
 *
 * Printing is byte for byte what Python's text_format.MessageToString
 * prints: fields in number order, two spaces per level, "name {" / "}"
 * for sub-messages (an empty one too), proto3 scalars only when not zero,
 * floats as Python prints a float32 (shortest of %.6g..%.9g that reads
 * back, then repr), doubles as repr, lowercase booleans, enums by name,
 * strings with Python's C escapes (octal for bytes outside ASCII), map
 * entries sorted by key.
 *
 * Messages are plain protobuf-c messages: everything is malloc'd, so they
 * are freed with protobuf_c_message_free_unpacked(msg, NULL).
 */
#ifndef GIR_IO_PBTEXT_H
#define GIR_IO_PBTEXT_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "core/internal.h"

#define GIR_PBTEXT_MAX_DEPTH 100

/* A new message of type d with its defaults, or NULL when out of memory. */
ProtobufCMessage *gir_pb_new(const ProtobufCMessageDescriptor *d);
/* Frees a message built by gir_pb_new/gir_pbtext or unpacked by protobuf-c
 * with the default allocator; NULL is allowed. */
void gir_pb_free(ProtobufCMessage *m);
/* Bytes of one element of a field of type t in a protobuf-c message struct
 * (a pointer for strings and sub-messages). */
size_t gir_pb_elt_size(ProtobufCType t);
/* For an integer type t, the bytes of one element (4 or 8), and in
 * *is_unsigned whether it is uint32, fixed32, uint64 or fixed64; 0 for
 * other types. */
size_t gir_pb_int_type(ProtobufCType t, bool *is_unsigned);

/* Parses text[0..len) into msg, merging (see above).  On failure msg holds
 * whatever was parsed before the error and must still be freed. */
gir_status gir_pbtext_merge(const char *text, size_t len, ProtobufCMessage *msg, gir_error *err);
/* Parses text into a new message of type d (*out is NULL on failure). */
gir_status gir_pbtext_parse(const ProtobufCMessageDescriptor *d, const char *text, size_t len,
                            ProtobufCMessage **out, gir_error *err);

/* Appends the text of msg to out (GIR_E_NOMEM when out fails to grow). */
gir_status gir_pbtext_print(const ProtobufCMessage *msg, gir_buf *out, gir_error *err);

/* Calls fn for every field kept as text (see above) in msg and in its
 * sub-messages, depth first in field order; text[0..len) is the field. */
typedef void (*gir_pbtext_unknown_fn)(void *ctx, const ProtobufCMessage *msg, const char *text, size_t len);
gir_status gir_pbtext_each_unknown(const ProtobufCMessage *msg, gir_pbtext_unknown_fn fn, void *ctx, gir_error *err);
/* How many fields kept as text msg and its sub-messages hold. */
size_t gir_pbtext_unknown_count(const ProtobufCMessage *msg);
/* The name at the start of such a field's text, copied into out[cap]
 * (truncated, NUL-terminated); returns its full length. */
size_t gir_pbtext_field_name(const char *text, size_t len, char *out, size_t cap);

/* Python's text for one float32 / double value ("1.0", "1e-05", "inf"). */
void gir_pbtext_fmt_float(char out[48], float v);
void gir_pbtext_fmt_double(char out[48], double v);

#endif
