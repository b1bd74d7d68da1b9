//===- SafeTensors.cpp - parameters from safetensors files ----------------===//
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON mapping each tensor's name to its dtype, shape and [begin, end) byte
// range of the data that follows, and the data. The file is mapped read-only
// and every field of the header is checked before any tensor is handed out:
// a truncated, oversized or inconsistent file is an error naming what is
// wrong, never a read outside the mapping.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

using namespace ffn_rt;

namespace {

/// One tensor of the file: where its bytes are in the data section.
struct Tensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  size_t begin = 0, bytes = 0;
};

/// The safetensors format caps the header at 100 MB; so does this reader.
constexpr uint64_t kMaxHeader = 100u << 20;
constexpr int kMaxDepth = 64;

/// Element sizes of the dtypes the format defines (0: unknown).
size_t elementBytes(const std::string &dtype) {
  static const std::unordered_map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U64", 8},     {"U32", 4},
      {"U16", 2}, {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

/// The header's JSON, parsed into tensors as it is read. Only what the
/// format uses is accepted: an object of objects with string, integer and
/// array members, and "__metadata__", an object of strings.
class HeaderParser {
public:
  HeaderParser(const char *text, size_t size) : p(text), end(text + size) {}

  /// "" or what is wrong, with the byte offset in the header.
  std::string parse(std::vector<Tensor> &tensors) {
    skipSpace();
    if (!consume('{'))
      return error("expected '{' at the start of the header");
    skipSpace();
    if (consume('}'))
      return finish();
    while (true) {
      std::string name;
      if (!parseString(name))
        return error(message.empty() ? "expected a tensor name" : message);
      skipSpace();
      if (!consume(':'))
        return error("expected ':' after \"" + name + "\"");
      if (name == "__metadata__") {
        if (!skipValue(0))
          return error(message.empty() ? "bad __metadata__" : message);
      } else {
        Tensor t;
        t.name = name;
        std::string bad = parseTensor(t);
        if (!bad.empty())
          return error("tensor '" + name + "': " + bad);
        tensors.push_back(std::move(t));
      }
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        return finish();
      return error("expected ',' or '}'");
    }
  }

private:
  std::string finish() {
    skipSpace();
    return p == end ? "" : error("trailing bytes after the header's object");
  }
  std::string error(const std::string &what) {
    return what + " (header byte " + std::to_string(p - begin) + ")";
  }
  void skipSpace() {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      ++p;
  }
  bool consume(char c) {
    if (p < end && *p == c) {
      ++p;
      return true;
    }
    return false;
  }

  /// A JSON string; escapes are decoded (\uXXXX to UTF-8).
  bool parseString(std::string &out) {
    skipSpace();
    if (!consume('"'))
      return false;
    while (p < end && *p != '"') {
      unsigned char c = static_cast<unsigned char>(*p++);
      if (c < 0x20) {
        message = "a control character in a string";
        return false;
      }
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (p == end)
        break;
      char e = *p++;
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        if (end - p < 4) {
          message = "a truncated \\u escape";
          return false;
        }
        unsigned v = 0;
        for (int i = 0; i < 4; ++i) {
          char h = *p++;
          v <<= 4;
          if (h >= '0' && h <= '9')
            v |= unsigned(h - '0');
          else if (h >= 'a' && h <= 'f')
            v |= unsigned(h - 'a' + 10);
          else if (h >= 'A' && h <= 'F')
            v |= unsigned(h - 'A' + 10);
          else {
            message = "a bad \\u escape";
            return false;
          }
        }
        // Surrogates stay as their code units (names are compared as
        // bytes; a name with an unpaired one is still a distinct name).
        if (v < 0x80) {
          out += static_cast<char>(v);
        } else if (v < 0x800) {
          out += static_cast<char>(0xc0 | (v >> 6));
          out += static_cast<char>(0x80 | (v & 0x3f));
        } else {
          out += static_cast<char>(0xe0 | (v >> 12));
          out += static_cast<char>(0x80 | ((v >> 6) & 0x3f));
          out += static_cast<char>(0x80 | (v & 0x3f));
        }
        break;
      }
      default:
        message = std::string("a bad escape '\\") + e + "'";
        return false;
      }
    }
    if (!consume('"')) {
      message = "an unterminated string";
      return false;
    }
    return true;
  }

  /// A non-negative integer that fits in int64_t.
  bool parseCount(int64_t &out) {
    skipSpace();
    if (p == end || *p < '0' || *p > '9')
      return false;
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
      v = v * 10 + unsigned(*p++ - '0');
      if (v > uint64_t(INT64_MAX / 16))
        return false;
    }
    // No fractions or exponents: sizes and offsets are integers.
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
      return false;
    out = static_cast<int64_t>(v);
    return true;
  }

  /// [n, n, ...] of counts.
  bool parseCounts(std::vector<int64_t> &out) {
    skipSpace();
    if (!consume('['))
      return false;
    skipSpace();
    if (consume(']'))
      return true;
    while (true) {
      int64_t v;
      if (!parseCount(v) || out.size() >= 8)
        return false;
      out.push_back(v);
      skipSpace();
      if (consume(','))
        continue;
      return consume(']');
    }
  }

  /// {"dtype": ..., "shape": [...], "data_offsets": [b, e]}, any order.
  std::string parseTensor(Tensor &t) {
    skipSpace();
    if (!consume('{'))
      return "expected an object";
    bool dtype = false, shape = false, offsets = false;
    std::vector<int64_t> range;
    skipSpace();
    if (!consume('}')) {
      while (true) {
        std::string key;
        if (!parseString(key))
          return "expected a key";
        skipSpace();
        if (!consume(':'))
          return "expected ':' after \"" + key + "\"";
        if (key == "dtype") {
          if (dtype || !parseString(t.dtype))
            return "bad or repeated dtype";
          dtype = true;
        } else if (key == "shape") {
          if (shape || !parseCounts(t.shape))
            return "bad or repeated shape (at most 8 non-negative integers)";
          shape = true;
        } else if (key == "data_offsets") {
          if (offsets || !parseCounts(range) || range.size() != 2)
            return "bad or repeated data_offsets (two non-negative integers)";
          offsets = true;
        } else {
          return "unknown key \"" + key + "\"";
        }
        skipSpace();
        if (consume(','))
          continue;
        if (consume('}'))
          break;
        return "expected ',' or '}'";
      }
    }
    if (!dtype || !shape || !offsets)
      return "needs dtype, shape and data_offsets";
    if (range[1] < range[0])
      return "data_offsets end before they begin";
    t.begin = static_cast<size_t>(range[0]);
    t.bytes = static_cast<size_t>(range[1] - range[0]);
    return "";
  }

  /// Any JSON value, for __metadata__ (which the format makes strings).
  bool skipValue(int depth) {
    if (depth > kMaxDepth) {
      message = "nesting deeper than " + std::to_string(kMaxDepth);
      return false;
    }
    skipSpace();
    if (p == end)
      return false;
    if (*p == '"') {
      std::string ignored;
      return parseString(ignored);
    }
    char open = *p;
    if (open != '{' && open != '[') {
      // A number or a literal: its characters up to a delimiter.
      const char *start = p;
      while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' &&
             *p != '\n' && *p != '\r' && *p != '\t')
        ++p;
      return p > start;
    }
    ++p;
    char close = open == '{' ? '}' : ']';
    skipSpace();
    if (consume(close))
      return true;
    while (true) {
      if (open == '{') {
        std::string key;
        if (!parseString(key))
          return false;
        skipSpace();
        if (!consume(':'))
          return false;
      }
      if (!skipValue(depth + 1))
        return false;
      skipSpace();
      if (consume(','))
        continue;
      return consume(close);
    }
  }

  const char *p, *end;
  const char *begin = p;
  std::string message;
};

} // namespace

struct ffn_safetensors {
  ffn_context *ctx = nullptr;
  std::string path;
  void *map = nullptr;
  size_t mapBytes = 0;
  const unsigned char *data = nullptr; // the data section
  std::vector<Tensor> tensors;
  std::unordered_map<std::string, size_t> byName;

  ~ffn_safetensors() {
    if (map)
      munmap(map, mapBytes);
    if (ctx)
      ctx->release();
  }
};

namespace {

/// Opens and checks `path`, or returns what is wrong.
std::string openFile(ffn_safetensors &f) {
  int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "cannot open it: " + std::string(std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return "not a regular file";
  }
  size_t size = static_cast<size_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    return "only " + std::to_string(size) +
           " bytes, less than the 8-byte header length";
  }
  void *map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED)
    return "cannot map it: " + std::string(std::strerror(errno));
  f.map = map;
  f.mapBytes = size;
  const unsigned char *bytes = static_cast<const unsigned char *>(map);
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = headerBytes << 8 | bytes[i];
  if (headerBytes > kMaxHeader || headerBytes > size - 8)
    return "its header length " + std::to_string(headerBytes) +
           " exceeds the file (" + std::to_string(size) +
           " bytes) or the format's 100 MB";
  HeaderParser parser(reinterpret_cast<const char *>(bytes + 8),
                      static_cast<size_t>(headerBytes));
  std::string bad = parser.parse(f.tensors);
  if (!bad.empty())
    return "bad header: " + bad;
  f.data = bytes + 8 + headerBytes;
  size_t dataBytes = size - 8 - static_cast<size_t>(headerBytes);
  for (size_t i = 0; i < f.tensors.size(); ++i) {
    const Tensor &t = f.tensors[i];
    std::string which = "tensor '" + t.name + "' ";
    if (!f.byName.emplace(t.name, i).second)
      return which + "appears twice";
    size_t element = elementBytes(t.dtype);
    if (!element)
      return which + "has unknown dtype '" + t.dtype + "'";
    // The product of the shape, without overflow (each dim < 2^59).
    unsigned __int128 n = 1;
    for (int64_t d : t.shape) {
      n *= static_cast<uint64_t>(d);
      if (n > (unsigned __int128)dataBytes)
        n = (unsigned __int128)dataBytes + 1;
    }
    if (n * element != t.bytes)
      return which + "has " + std::to_string(t.bytes) +
             " bytes of data, but its shape and dtype need " +
             (n > dataBytes ? std::string("more than the file holds")
                            : std::to_string(uint64_t(n * element)));
    if (t.begin > dataBytes || t.bytes > dataBytes - t.begin)
      return which + "lies outside the file's " + std::to_string(dataBytes) +
             " bytes of data";
  }
  return "";
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

const char *dtypeName(int64_t dtype) {
  switch (dtype) {
  case FFN_DTYPE_F32:
    return "F32";
  case FFN_DTYPE_BF16:
    return "BF16";
  case FFN_DTYPE_F16:
    return "F16";
  default:
    return "?";
  }
}

} // namespace

extern "C" {

ffn_status ffn_safetensors_open(ffn_context *ctx, const char *path,
                                ffn_safetensors **out) {
  if (!ctx)
    return FFN_ERROR_INVALID_ARGUMENT;
  if (!path || !out)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_safetensors_open: path and out must not be null");
  *out = nullptr;
  auto *f = new (std::nothrow) ffn_safetensors;
  if (!f)
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY, "ffn_safetensors_open");
  f->path = path;
  std::string bad;
  try {
    bad = openFile(*f);
  } catch (const std::bad_alloc &) {
    delete f;
    return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                std::string("safetensors file '") + path +
                    "': out of memory reading its header");
  }
  if (!bad.empty()) {
    bool missing = !f->map && bad.rfind("cannot open", 0) == 0;
    delete f;
    return fail(ctx, missing ? FFN_ERROR_NOT_FOUND : FFN_ERROR_INVALID_ARGUMENT,
                std::string("safetensors file '") + path + "': " + bad);
  }
  ctx->refs.fetch_add(1, std::memory_order_relaxed);
  f->ctx = ctx;
  *out = f;
  return FFN_OK;
}

void ffn_safetensors_close(ffn_safetensors *file) { delete file; }

int64_t ffn_safetensors_count(const ffn_safetensors *file) {
  return file ? static_cast<int64_t>(file->tensors.size()) : 0;
}

ffn_status ffn_safetensors_tensor_at(const ffn_safetensors *file, int64_t index,
                                     ffn_tensor_info *out) {
  if (!file)
    return FFN_ERROR_INVALID_ARGUMENT;
  if (!out || index < 0 || index >= ffn_safetensors_count(file))
    return fail(file->ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_safetensors_tensor_at: index " + std::to_string(index) +
                    " of " + std::to_string(file->tensors.size()) +
                    " tensors, or out is null");
  const Tensor &t = file->tensors[static_cast<size_t>(index)];
  *out = {};
  out->name = t.name.c_str();
  out->dtype = t.dtype.c_str();
  out->rank = static_cast<int64_t>(t.shape.size());
  for (size_t i = 0; i < t.shape.size(); ++i)
    out->shape[i] = t.shape[i];
  out->data = file->data + t.begin;
  out->bytes = t.bytes;
  return FFN_OK;
}

ffn_status ffn_safetensors_tensor(const ffn_safetensors *file, const char *name,
                                  ffn_tensor_info *out) {
  if (!file)
    return FFN_ERROR_INVALID_ARGUMENT;
  if (!name || !out)
    return fail(file->ctx, FFN_ERROR_INVALID_ARGUMENT,
                "ffn_safetensors_tensor: name and out must not be null");
  auto it = file->byName.find(name);
  if (it == file->byName.end())
    return fail(file->ctx, FFN_ERROR_NOT_FOUND,
                std::string("safetensors file '") + file->path +
                    "' has no tensor '" + name + "'");
  return ffn_safetensors_tensor_at(file, static_cast<int64_t>(it->second), out);
}

ffn_status ffn_kernel_set_params_safetensors(ffn_kernel *kernel,
                                             const ffn_safetensors *file,
                                             const char *const *names,
                                             ffn_weight_layout layout) {
  if (!kernel)
    return FFN_ERROR_INVALID_ARGUMENT;
  ffn_context *ctx = kernel->ctx;
  const char *caller = "ffn_kernel_set_params_safetensors";
  if (!file)
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                std::string(caller) + ": file must not be null");
  int layoutValue;
  if (!readLayout(&layout, layoutValue))
    return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                std::string(caller) + ": unknown layout " +
                    std::to_string(layoutValue));
  const ffn_kernel_desc &d = *kernel->desc;
  // Every tensor is found and checked before any parameter changes.
  std::vector<ffn_tensor_info> tensors(static_cast<size_t>(d.num_params));
  for (int64_t i = 0; i < d.num_params; ++i) {
    const ffn_param_desc &p = d.params[i];
    const char *name = names && names[i] ? names[i] : p.name;
    auto it = file->byName.find(name);
    std::string where = "for parameter '" + std::string(p.name) +
                        "' of kernel '" + d.name + "'";
    if (it == file->byName.end())
      return fail(ctx, FFN_ERROR_NOT_FOUND,
                  "safetensors file '" + file->path + "' has no tensor '" +
                      name + "' " + where);
    const Tensor &t = file->tensors[it->second];
    // The expected shape: stacked tensors first, then [in, out] or, as
    // PyTorch stores nn.Linear weights, [out, in].
    std::vector<int64_t> want;
    if (p.experts > 0)
      want.push_back(p.experts);
    if (p.rank == 2 && layout == FFN_LAYOUT_OUT_IN) {
      want.push_back(p.shape[1]);
      want.push_back(p.shape[0]);
    } else {
      want.push_back(p.shape[0]);
      if (p.rank == 2)
        want.push_back(p.shape[1]);
    }
    if (t.dtype != dtypeName(d.dtype) || t.shape != want)
      return fail(ctx, FFN_ERROR_INVALID_ARGUMENT,
                  "tensor '" + t.name + "' of '" + file->path + "' is " +
                      t.dtype + " " + shapeText(t.shape) + ", but " + where +
                      " it must be " + dtypeName(d.dtype) + " " +
                      shapeText(want) +
                      (p.rank == 2 ? layout == FFN_LAYOUT_OUT_IN
                                         ? " ([out, in], as nn.Linear)"
                                         : " ([in, out])"
                                   : ""));
    ffn_safetensors_tensor_at(file, static_cast<int64_t>(it->second),
                              &tensors[static_cast<size_t>(i)]);
  }
  for (int64_t i = 0; i < d.num_params; ++i) {
    const ffn_tensor_info &t = tensors[static_cast<size_t>(i)];
    // The data section is not aligned to the elements: the packers read
    // elements in place, so an unaligned tensor goes through a copy.
    const void *src = t.data;
    std::vector<unsigned char> copy;
    if (reinterpret_cast<uintptr_t>(src) % dtypeSize(d.dtype) != 0) {
      try {
        copy.assign(static_cast<const unsigned char *>(t.data),
                    static_cast<const unsigned char *>(t.data) + t.bytes);
      } catch (const std::bad_alloc &) {
        return fail(ctx, FFN_ERROR_OUT_OF_MEMORY,
                    std::string(caller) + ": copying tensor '" + t.name + "'");
      }
      src = copy.data();
    }
    ffn_status s =
        ffn_kernel_set_param(kernel, d.params[i].name, src, t.bytes, layout);
    if (s != FFN_OK)
      return s;
  }
  return FFN_OK;
}

} // extern "C"
