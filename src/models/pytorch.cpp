// torch.save's zip: ARCHIVE/data.pkl (a pickle naming each storage's type,
// key and element count) first, then ARCHIVE/data/KEY (each storage's
// bytes, stored uncompressed). torch writes every entry with its sizes
// after its data (a data descriptor), so the storages cannot be stepped
// over one by one: the pickle is read from the front, the weights are
// stepped over whole, and the sizes come from the central directory at
// the end. The pickle is parsed by a small opcode reader that builds
// nothing and calls nothing, so a hostile pickle cannot run.
#include <algorithm>
#include <optional>
#include <variant>

#include "model_readers.hpp"

namespace imgsmith::models_detail {
namespace {

constexpr std::uint64_t kMaxPickleBytes = 256ull << 20;
constexpr std::size_t kMaxStack = 1'000'000;

// ----- the pickle ------------------------------------------------------------

struct Mark {};
struct Opaque {};
struct Global {
  std::string module, name;
};
struct Value;
using Tuple = std::vector<Value>;
struct Value {
  std::variant<Opaque, Mark, std::int64_t, std::string, Global, Tuple> v;
};

struct Storage {
  std::string dtype;
  unsigned element_bytes = 0;
  std::uint64_t elements = 0;
};

// Only what a storage's persistent id can hold is kept as a value: a
// tuple of at most this many scalars, strings of at most this many bytes.
// Anything larger or nested is opaque, so no value grows with the pickle
// and a copy (memo, DUP) costs little: a pickle cannot build a bomb here.
constexpr std::size_t kMaxTupleItems = 8;
constexpr std::size_t kMaxKeptString = 256;
// Bytes of kept strings pushed in all, copies included: past it the
// pickle is not torch.save's plain kind, and the count is bytes only.
constexpr std::uint64_t kMaxHeldBytes = 64ull << 20;

std::uint64_t weight(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v.v)) return s->size() + 1;
  if (const auto* g = std::get_if<Global>(&v.v)) return g->module.size() + g->name.size() + 1;
  if (const auto* t = std::get_if<Tuple>(&v.v)) {
    std::uint64_t sum = 1;
    for (const auto& item : *t) sum += weight(item);
    return sum;
  }
  return 1;
}

// Reads the storages torch.save's pickle names. Returns false (having
// read what it could) at an opcode it does not know, or when the pickle
// outgrows what torch.save writes: the count is then bytes only, never a
// guess.
class PickleScan {
 public:
  explicit PickleScan(std::string_view bytes) : p_(bytes) {}

  bool run(std::map<std::string, Storage>& storages) {
    while (at_ < p_.size()) {
      const auto op = static_cast<unsigned char>(p_[at_++]);
      if (!step(op, storages)) return false;
      if (op == '.') return true;
      if (stack_.size() > kMaxStack || memo_.size() > kMaxStack || held_ > kMaxHeldBytes)
        return false;
    }
    return false;  // no STOP
  }

 private:
  std::uint64_t arg(std::size_t bytes) {
    if (at_ + bytes > p_.size()) throw Malformed("its pickle ends inside an opcode");
    const std::uint64_t v = le_at(p_, at_, bytes);
    at_ += bytes;
    return v;
  }
  std::string_view take(std::uint64_t n) {
    if (n > p_.size() - at_) throw Malformed("its pickle ends inside a string");
    const std::string_view s = p_.substr(at_, static_cast<std::size_t>(n));
    at_ += static_cast<std::size_t>(n);
    return s;
  }
  std::string_view line() {
    const std::size_t end = p_.find('\n', at_);
    if (end == std::string_view::npos) throw Malformed("its pickle ends inside a line");
    const std::string_view s = p_.substr(at_, end - at_);
    at_ = end + 1;
    return s;
  }
  Value pop() {
    if (stack_.empty()) throw Malformed("its pickle pops an empty stack");
    Value v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  Tuple pop_to_mark() {
    std::size_t mark = stack_.size();
    while (mark > 0 && !std::holds_alternative<Mark>(stack_[mark - 1].v)) --mark;
    if (mark == 0) throw Malformed("its pickle has no mark to pop to");
    Tuple items;
    if (stack_.size() - mark <= kMaxTupleItems)
      items.assign(std::make_move_iterator(stack_.begin() + static_cast<long>(mark)),
                   std::make_move_iterator(stack_.end()));
    else
      items.resize(kMaxTupleItems + 1);  // too many to keep: only its size matters (opaque)
    stack_.resize(mark - 1);
    return items;
  }
  void push(Value v) {
    held_ += weight(v);
    stack_.push_back(std::move(v));
  }
  void opaque() { push(Value{Opaque{}}); }
  void push_string(std::string_view s) {
    push(s.size() <= kMaxKeptString ? Value{std::string(s)} : Value{Opaque{}});
  }
  // A tuple is kept only when it is small and flat.
  void push_tuple(Tuple items) {
    bool flat = items.size() <= kMaxTupleItems;
    for (const auto& item : items)
      flat =
          flat && !std::holds_alternative<Tuple>(item.v) && !std::holds_alternative<Mark>(item.v);
    push(flat ? Value{std::move(items)} : Value{Opaque{}});
  }

  void persistent_id(Value pid, std::map<std::string, Storage>& storages) {
    // ('storage', torch.<Type>Storage, key, location, numel)
    const auto* t = std::get_if<Tuple>(&pid.v);
    if (t != nullptr && t->size() == 5) {
      const auto* tag = std::get_if<std::string>(&(*t)[0].v);
      const auto* type = std::get_if<Global>(&(*t)[1].v);
      const auto* key = std::get_if<std::string>(&(*t)[2].v);
      const auto* numel = std::get_if<std::int64_t>(&(*t)[4].v);
      if (tag && *tag == "storage" && type && key && numel && *numel >= 0) {
        const TorchStorage s = torch_storage(type->name);
        storages[*key] = Storage{s.dtype.empty() ? type->name : s.dtype, s.bytes,
                                 static_cast<std::uint64_t>(*numel)};
      }
    }
    opaque();
  }

  bool step(unsigned char op, std::map<std::string, Storage>& storages) {
    switch (op) {
      case 0x80:
        arg(1);
        return true;  // PROTO
      case 0x95:
        arg(8);
        return true;  // FRAME
      case '.':
        return true;  // STOP
      case '(':
        push(Value{Mark{}});
        return true;
      case ')':
        push(Value{Tuple{}});
        return true;
      case '}':
      case ']':
      case 0x8f:
      case 'N':
      case 0x88:
      case 0x89:
        opaque();
        return true;
      case 'X':
        push_string(take(arg(4)));
        return true;
      case 0x8c:
        push_string(take(arg(1)));
        return true;
      case 0x8d:
        push_string(take(arg(8)));
        return true;
      case 'U':
        push_string(take(arg(1)));
        return true;
      case 'T':
        push_string(take(arg(4)));
        return true;
      case 'C':
        take(arg(1));
        opaque();
        return true;
      case 'B':
        take(arg(4));
        opaque();
        return true;
      case 0x8e:
      case 0x96:
        take(arg(8));
        opaque();
        return true;
      case 'V':
      case 'S':
        push_string(line());
        return true;
      case 'F':
      case 'L':
      case 'P':
        line();
        opaque();
        return true;
      case 'I': {
        const std::string_view text = line();
        std::int64_t v = 0;
        bool fits = !text.empty() && text.size() <= 18;  // 18 digits never overflow
        for (char c : text) {
          fits = fits && c >= '0' && c <= '9';
          if (fits) v = v * 10 + (c - '0');
        }
        push(fits ? Value{v} : Value{Opaque{}});
        return true;
      }
      case 'G':
        arg(8);
        opaque();
        return true;
      case 'J':
        push(Value{static_cast<std::int64_t>(static_cast<std::int32_t>(arg(4)))});
        return true;
      case 'K':
        push(Value{static_cast<std::int64_t>(arg(1))});
        return true;
      case 'M':
        push(Value{static_cast<std::int64_t>(arg(2))});
        return true;
      case 0x8a: {  // LONG1: little-endian two's complement
        const std::uint64_t n = arg(1);
        const std::string_view bytes = take(n);
        if (n > 8) {
          opaque();
          return true;
        }
        std::uint64_t raw = n > 0 ? le_at(bytes, 0, bytes.size()) : 0;
        if (n > 0 && n < 8 && (static_cast<unsigned char>(bytes.back()) & 0x80) != 0)
          raw |= ~std::uint64_t{0} << (8 * n);
        push(Value{static_cast<std::int64_t>(raw)});
        return true;
      }
      case 0x8b:
        take(arg(4));
        opaque();
        return true;  // LONG4
      case 'c': {
        const std::string_view module = line(), name = line();
        if (module.size() + name.size() > kMaxKeptString)
          opaque();
        else
          push(Value{Global{std::string(module), std::string(name)}});
        return true;
      }
      case 0x93: {  // STACK_GLOBAL
        Value name = pop(), module = pop();
        const auto* n = std::get_if<std::string>(&name.v);
        const auto* m = std::get_if<std::string>(&module.v);
        push(n && m ? Value{Global{*m, *n}} : Value{Opaque{}});
        return true;
      }
      case 't':
        push_tuple(pop_to_mark());
        return true;
      case 0x85: {  // TUPLE1..3: moved in one by one (an initializer list would copy)
        Tuple t;
        t.push_back(pop());
        push_tuple(std::move(t));
        return true;
      }
      case 0x86: {
        Tuple t(2);
        t[1] = pop();
        t[0] = pop();
        push_tuple(std::move(t));
        return true;
      }
      case 0x87: {
        Tuple t(3);
        t[2] = pop();
        t[1] = pop();
        t[0] = pop();
        push_tuple(std::move(t));
        return true;
      }
      case 'q':
        memo(arg(1));
        return true;
      case 'r':
        memo(arg(4));
        return true;
      case 0x94:
        memo(memo_.size());
        return true;
      case 'h':
        recall(arg(1));
        return true;
      case 'j':
        recall(arg(4));
        return true;
      case 'Q':
        persistent_id(pop(), storages);
        return true;
      case 'R':
        pop();
        pop();
        opaque();
        return true;  // REDUCE: recorded, never called
      case 0x81:
        pop();
        pop();
        opaque();
        return true;  // NEWOBJ
      case 0x92:
        pop();
        pop();
        pop();
        opaque();
        return true;  // NEWOBJ_EX
      case 'b':
        pop();
        return true;  // BUILD
      case 's':
        pop();
        pop();
        return true;
      case 'u':
      case 'e':
      case 0x90:
        pop_to_mark();
        return true;
      case 'a':
        pop();
        return true;
      case 'd':
      case 'l':
      case 0x91:
        pop_to_mark();
        opaque();
        return true;
      case '0':
        pop();
        return true;
      case '1':
        pop_to_mark();
        return true;
      case '2': {
        Value top = pop();
        push(top);
        push(std::move(top));
        return true;
      }
      default:
        return false;
    }
  }
  void memo(std::uint64_t index) {
    if (stack_.empty()) throw Malformed("its pickle memoizes an empty stack");
    if (index > kMaxStack) throw Malformed("its pickle memoizes at an absurd index");
    held_ += weight(stack_.back());
    memo_[index] = stack_.back();
  }
  void recall(std::uint64_t index) {
    const auto it = memo_.find(index);
    push(it == memo_.end() ? Value{Opaque{}} : it->second);
  }

  std::string_view p_;
  std::size_t at_ = 0;
  std::vector<Value> stack_;
  std::map<std::uint64_t, Value> memo_;
  std::uint64_t held_ = 0;  // bytes of values pushed and memoized, copies included
};

// The storage's elements fill exactly `bytes` (no product that wraps).
bool storage_bytes_match(const Storage& s, std::uint64_t bytes) {
  std::uint64_t product = 0;
  return multiply(s.elements, s.element_bytes, product) && product == bytes;
}

// ----- the zip ---------------------------------------------------------------

// The tail read for the central directory: enough for ~60,000 entries.
constexpr std::uint64_t kMaxTailBytes = 4ull << 20;

// The first entry's data when it is the pickle (its size in its header, or
// in a data descriptor after it, found by its signature and a size that
// matches); nullopt when the first entry is something else.
std::optional<std::string> read_first_pickle(ForwardReader& in) {
  const std::string h = read_bytes(in, 26, "the first zip local header");
  const std::uint64_t flags = le_at(h, 2, 2), method = le_at(h, 4, 2), stored = le_at(h, 14, 4);
  const std::string name = read_bytes(in, le_at(h, 22, 2), "a zip entry name");
  skip_bytes(in, le_at(h, 24, 2), "a zip extra field");
  if (!name.ends_with("data.pkl") || method != 0) return std::nullopt;
  if ((flags & 0x8) == 0 || stored != 0) {
    if (stored > kMaxPickleBytes) return std::nullopt;
    return read_bytes(in, stored, "the pickle");
  }
  std::string data;
  std::size_t searched = 0;
  char buf[65536];
  while (data.size() < kMaxPickleBytes) {
    const std::size_t got = in.read(buf, sizeof buf);
    if (got == 0) break;
    data.append(buf, got);
    // A descriptor: PK 7 8, CRC-32, then the sizes (4 or 8 bytes each),
    // the compressed one equal to the bytes before it.
    for (std::size_t at = data.find("PK\x07\x08", searched > 3 ? searched - 3 : 0);
         at != std::string::npos; at = data.find("PK\x07\x08", at + 1)) {
      if (at + 16 <= data.size() && le_at(data, at + 8, 4) == at) return data.substr(0, at);
      if (at + 24 <= data.size() && le_at(data, at + 8, 8) == at) return data.substr(0, at);
    }
    searched = data.size() > 24 ? data.size() - 24 : 0;
  }
  return std::nullopt;
}

struct DirectoryEntry {
  std::string name;
  std::uint64_t size = 0;
};

// The central directory, from the file's last bytes (`tail`, which start
// at `tail_start`).
std::vector<DirectoryEntry> central_directory(const std::string& tail, std::uint64_t tail_start) {
  std::size_t end = std::string::npos;
  for (std::size_t at = tail.size() >= 22 ? tail.size() - 22 : std::string::npos;
       at != std::string::npos; at = at == 0 ? std::string::npos : at - 1)
    if (tail.compare(at, 4, "PK\x05\x06") == 0 &&
        at + 22 + le_at(tail, at + 20, 2) == tail.size()) {
      end = at;
      break;
    }
  if (end == std::string::npos) throw Malformed("it has no zip end of central directory");
  std::uint64_t entries = le_at(tail, end + 10, 2), cd_size = le_at(tail, end + 12, 4),
                cd_offset = le_at(tail, end + 16, 4);
  if (entries == 0xffff || cd_size == 0xffffffff || cd_offset == 0xffffffff) {
    // zip64: the locator just before points at the zip64 end record.
    if (end < 20 || tail.compare(end - 20, 4, "PK\x06\x07") != 0)
      throw Malformed("its zip64 end locator is missing");
    const std::uint64_t record = le_at(tail, end - 20 + 8, 8);
    if (record < tail_start || record - tail_start > tail.size() ||
        tail.size() - (record - tail_start) < 56)
      throw Malformed("its zip64 end record is out of reach");
    const std::size_t r = static_cast<std::size_t>(record - tail_start);
    if (tail.compare(r, 4, "PK\x06\x06") != 0) throw Malformed("its zip64 end record is damaged");
    entries = le_at(tail, r + 32, 8);
    cd_size = le_at(tail, r + 40, 8);
    cd_offset = le_at(tail, r + 48, 8);
  }
  if (cd_offset < tail_start || cd_offset - tail_start > tail.size() ||
      tail.size() - (cd_offset - tail_start) < cd_size)
    throw Malformed("its central directory is larger than imgsmith reads (" +
                    std::to_string(cd_size) + " bytes)");
  std::vector<DirectoryEntry> out;
  std::size_t at = static_cast<std::size_t>(cd_offset - tail_start);
  for (std::uint64_t i = 0; i < entries; ++i) {
    if (at + 46 > tail.size() || tail.compare(at, 4, "PK\x01\x02") != 0)
      throw Malformed("its central directory is damaged");
    const std::size_t name_length = le_at(tail, at + 28, 2), extra = le_at(tail, at + 30, 2),
                      comment = le_at(tail, at + 32, 2);
    if (at + 46 + name_length + extra + comment > tail.size())
      throw Malformed("its central directory is damaged");
    DirectoryEntry e{tail.substr(at + 46, name_length), le_at(tail, at + 24, 4)};
    if (e.size == 0xffffffff) {
      // zip64 extra field: the uncompressed size first.
      const std::string_view x(tail.data() + at + 46 + name_length, extra);
      for (std::size_t f = 0; f + 4 <= x.size(); f += 4 + le_at(x, f + 2, 2))
        if (le_at(x, f, 2) == 0x0001 && f + 12 <= x.size()) e.size = le_at(x, f + 4, 8);
    }
    out.push_back(std::move(e));
    at += 46 + name_length + extra + comment;
  }
  return out;
}

// The storage key of ARCHIVE/data/KEY, or "" for any other entry.
std::string_view storage_key(std::string_view name) {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view rest = name.substr(slash + 1);
  return rest.starts_with("data/") && rest.size() > 5 ? rest.substr(5) : std::string_view{};
}

}  // namespace

void read_pytorch(ForwardReader& in, std::uint64_t size, ModelFile& out) {
  const std::string magic = read_bytes(in, 4, "the magic");
  if (magic != "PK\x03\x04") {
    // torch.save's format before 1.6: one pickle with the storages after
    // it, nothing to walk without unpickling. Its bytes are all there is.
    out.parameters_known = false;
    out.weight_bytes = size;
    out.warnings.push_back(
        "a torch.save checkpoint in the format before PyTorch 1.6: its size is counted as its "
        "weights, its parameters are not read (save it again with a current torch, or as "
        "safetensors)");
    return;
  }
  std::map<std::string, Storage> storages;
  const std::optional<std::string> pickle = read_first_pickle(in);
  const bool pickle_read = pickle && PickleScan(*pickle).run(storages);
  if (in.position() > size) throw Malformed("its first entry runs past the end of the file");
  // The central directory holds an entry of ~100 bytes a storage (and a
  // few more entries); the pickle says how many storages there are, so
  // only that much of the end is read, not the largest tail.
  const std::uint64_t tail_bytes =
      pickle_read
          ? std::min<std::uint64_t>(kMaxTailBytes, (storages.size() + 16) * 192 + (64 << 10))
          : kMaxTailBytes;
  const std::uint64_t tail_start =
      std::max(in.position(), size > tail_bytes ? size - tail_bytes : 0);
  skip_bytes(in, tail_start - in.position(), "the storages");
  const std::string tail = read_bytes(in, size - tail_start, "the central directory");

  std::map<std::string, std::uint64_t> stored;  // key -> bytes
  for (const auto& e : central_directory(tail, tail_start)) {
    const std::string_view key = storage_key(e.name);
    if (key.empty()) continue;
    if (e.size > size) throw Malformed("entry '" + e.name + "' claims more bytes than the file");
    stored[std::string(key)] = e.size;
  }
  if (stored.empty()) throw Malformed("it holds no data/ entries (no tensors)");

  for (const auto& [key, bytes] : stored) out.weight_bytes += bytes;
  out.tensors = stored.size();  // storages: tensors that share one count once
  // Parameters from the pickle only when it names every storage and each
  // one's elements fill exactly its bytes: otherwise bytes only.
  bool agree = pickle_read;
  for (const auto& [key, bytes] : stored) {
    const auto it = storages.find(key);
    agree = agree && it != storages.end() && it->second.element_bytes > 0 &&
            storage_bytes_match(it->second, bytes);
  }
  if (!agree) {
    out.parameters_known = false;
    out.warnings.push_back(
        pickle_read ? "its pickle does not name a type and element count for every storage; "
                      "its bytes are counted, its parameters are not"
                    : "its pickle is not the plain kind torch.save writes; its bytes are counted, "
                      "its parameters are not (it was parsed, never run)");
    return;
  }
  for (const auto& [key, bytes] : stored) {
    const Storage& st = storages.at(key);
    out.parameters += st.elements;
    out.dtype_parameters[st.dtype] += st.elements;
  }
}

}  // namespace imgsmith::models_detail
