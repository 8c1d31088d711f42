#ifndef GRAPHIR_EXPORT_H
#define GRAPHIR_EXPORT_H

/* GIR_API marks the symbols of libgraphir's stable C API; everything else is
 * hidden (the library is built with -fvisibility=hidden). */
#if defined(GIR_BUILDING_LIB) && defined(__GNUC__)
#define GIR_API __attribute__((visibility("default")))
#else
#define GIR_API
#endif

#endif
