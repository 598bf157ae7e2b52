#include "elf_image.h"

#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kime {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
constexpr uint32_t kRelNone = R_X86_64_NONE, kRelAbs = R_X86_64_64, kRelGlobDat = R_X86_64_GLOB_DAT,
                   kRelJumpSlot = R_X86_64_JUMP_SLOT, kRelRelative = R_X86_64_RELATIVE;
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
constexpr uint32_t kRelNone = R_AARCH64_NONE, kRelAbs = R_AARCH64_ABS64, kRelGlobDat = R_AARCH64_GLOB_DAT,
                   kRelJumpSlot = R_AARCH64_JUMP_SLOT, kRelRelative = R_AARCH64_RELATIVE;
#else
#error "kime's loader knows x86-64 and AArch64"
#endif

uint64_t pageSize() { return uint64_t(sysconf(_SC_PAGESIZE)); }
uint64_t pageDown(uint64_t v) { return v & ~(pageSize() - 1); }
uint64_t pageUp(uint64_t v) { return pageDown(v + pageSize() - 1); }

// What PT_DYNAMIC says, as virtual addresses and sizes.
struct Dynamic {
  uint64_t symtab = 0, strtab = 0, strsz = 0, hash = 0, gnuHash = 0;
  uint64_t rela = 0, relasz = 0, relaent = sizeof(Elf64_Rela), jmprel = 0, pltrelsz = 0;
  uint64_t init = 0, initArray = 0, initArraySz = 0, fini = 0, finiArray = 0, finiArraySz = 0;
};

}  // namespace

// One load, step by step; each step returns false with `error` set.
struct ElfImage::Loader {
  Loader(const uint8_t* b, size_t n, std::string& e, ElfImage& i) : bytes(b), size(n), error(e), img(i) {}
  const uint8_t* bytes;
  size_t size;
  std::string& error;
  ElfImage& img;
  std::vector<Elf64_Phdr> ph;
  uint64_t lo = UINT64_MAX, hi = 0;  // the virtual address span of the loadable segments
  Dynamic d;
  const char* strtab = nullptr;
  const Elf64_Sym* syms = nullptr;
  uint64_t nsyms = 0;

  bool fail(const std::string& why) { return error = why, false; }
  // A pointer to `n` bytes at virtual address `va`, or null when they are not all mapped.
  uint8_t* at(uint64_t va, uint64_t n) const {
    if (va < lo || va > hi || hi - va < n) return nullptr;
    return img.base_ + va;
  }
  // `count` T's at `va`, or null when they are not all mapped or not aligned for T (the mapping
  // is page-aligned, so an aligned address is an aligned pointer).
  template <typename T>
  const T* table(uint64_t va, uint64_t count) const {
    if (va % alignof(T) != 0 || count > (hi - lo) / sizeof(T)) return nullptr;
    return reinterpret_cast<const T*>(at(va, count * sizeof(T)));
  }

  // The ELF header and the program headers; the span the loadable segments need.
  bool readHeaders() {
    Elf64_Ehdr eh;
    if (size < sizeof eh) return fail("too short for an ELF header");
    std::memcpy(&eh, bytes, sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return fail("not an ELF object");
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
      return fail("not a 64-bit little-endian ELF object");
    if (eh.e_type != ET_DYN) return fail("not a shared object");
    if (eh.e_machine != kMachine)
      return fail("built for ELF machine " + std::to_string(eh.e_machine) + ", this one is " +
                  std::to_string(kMachine));
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
        (size - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum)
      return fail("program headers outside the object");
    ph.resize(eh.e_phnum);
    if (!ph.empty()) std::memcpy(ph.data(), bytes + eh.e_phoff, ph.size() * sizeof(Elf64_Phdr));
    for (const Elf64_Phdr& p : ph) {
      if (p.p_type == PT_TLS) return fail("thread-local storage is not supported");
      if (p.p_type != PT_LOAD) continue;
      if (p.p_filesz > p.p_memsz || p.p_offset > size || size - p.p_offset < p.p_filesz ||
          p.p_vaddr > (uint64_t(1) << 40) || p.p_memsz > (uint64_t(1) << 40))
        return fail("a loadable segment lies outside the object");
      lo = std::min(lo, pageDown(p.p_vaddr));
      hi = std::max(hi, pageUp(p.p_vaddr + p.p_memsz));
    }
    if (lo >= hi) return fail("no loadable segment");
    return true;
  }

  // The segments copied into one anonymous, writable mapping.
  bool mapSegments() {
    void* mem = mmap(nullptr, hi - lo, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return fail("cannot map " + std::to_string(hi - lo) + " bytes: " + std::strerror(errno));
    img.map_ = mem;
    img.span_ = hi - lo;
    img.base_ = static_cast<uint8_t*>(mem) - lo;
    for (const Elf64_Phdr& p : ph)
      if (p.p_type == PT_LOAD) std::memcpy(img.base_ + p.p_vaddr, bytes + p.p_offset, p.p_filesz);
    return true;
  }

  bool readDynamic() {
    const Elf64_Phdr* seg = nullptr;
    for (const Elf64_Phdr& p : ph)
      if (p.p_type == PT_DYNAMIC) seg = &p;
    const auto* dyn = seg ? table<Elf64_Dyn>(seg->p_vaddr, seg->p_memsz / sizeof(Elf64_Dyn)) : nullptr;
    if (!dyn) return fail("no dynamic section (or one outside the object, or misaligned)");
    for (size_t i = 0; i < seg->p_memsz / sizeof(Elf64_Dyn) && dyn[i].d_tag != DT_NULL; ++i) {
      uint64_t v = dyn[i].d_un.d_val;
      switch (dyn[i].d_tag) {
        case DT_SYMTAB:
          d.symtab = v;
          break;
        case DT_STRTAB:
          d.strtab = v;
          break;
        case DT_STRSZ:
          d.strsz = v;
          break;
        case DT_HASH:
          d.hash = v;
          break;
        case DT_GNU_HASH:
          d.gnuHash = v;
          break;
        case DT_RELA:
          d.rela = v;
          break;
        case DT_RELASZ:
          d.relasz = v;
          break;
        case DT_RELAENT:
          d.relaent = v;
          break;
        case DT_JMPREL:
          d.jmprel = v;
          break;
        case DT_PLTRELSZ:
          d.pltrelsz = v;
          break;
        case DT_PLTREL:
          if (v != DT_RELA) return fail("PLT relocations are not RELA");
          break;
        case DT_INIT:
          d.init = v;
          break;
        case DT_INIT_ARRAY:
          d.initArray = v;
          break;
        case DT_INIT_ARRAYSZ:
          d.initArraySz = v;
          break;
        case DT_FINI:
          d.fini = v;
          break;
        case DT_FINI_ARRAY:
          d.finiArray = v;
          break;
        case DT_FINI_ARRAYSZ:
          d.finiArraySz = v;
          break;
        case DT_REL:
          return fail("REL relocations are not supported");
        case DT_TEXTREL:
          return fail("relocations in read-only code are not supported");
        default:
          break;  // DT_NEEDED and the rest: the host table stands in for the libraries
      }
    }
    if (d.relaent != sizeof(Elf64_Rela)) return fail("unexpected relocation entry size");
    if (!d.strtab || !d.strsz || !at(d.strtab, d.strsz)) return fail("no string table");
    if (!d.symtab) return fail("no symbol table");
    strtab = reinterpret_cast<const char*>(img.base_ + d.strtab);
    return true;
  }

  // The number of dynamic symbols: from the SysV hash table, else the end of the GNU hash chains.
  bool readSymbols() {
    const auto* h = d.hash ? table<uint32_t>(d.hash, 2) : nullptr;
    const auto* g = d.gnuHash ? table<uint32_t>(d.gnuHash, 4) : nullptr;
    if (h) {
      nsyms = h[1];
    } else if (g) {
      uint32_t nbuckets = g[0], symoffset = g[1], bloomSize = g[2];
      uint64_t bucketsVa = d.gnuHash + 16 + uint64_t(bloomSize) * 8;
      uint64_t chainsVa = bucketsVa + uint64_t(nbuckets) * 4;
      const auto* buckets = table<uint32_t>(bucketsVa, nbuckets);
      if (!buckets) return fail("bad GNU hash table");
      uint32_t last = 0;
      for (uint32_t b = 0; b < nbuckets; ++b) last = std::max(last, buckets[b]);
      nsyms = symoffset;
      if (last >= symoffset) {
        // The chain of the highest bucket ends at the last symbol (its low bit set).
        for (;; ++last) {
          const auto* c = table<uint32_t>(chainsVa + uint64_t(last - symoffset) * 4, 1);
          if (!c) return fail("bad GNU hash table");
          if (*c & 1) break;
        }
        nsyms = uint64_t(last) + 1;
      }
    } else {
      return fail("no symbol hash table");
    }
    syms = table<Elf64_Sym>(d.symtab, nsyms);
    return syms ? true : fail("symbol table outside the object, or misaligned");
  }

  const char* nameOf(const Elf64_Sym& s) const {
    if (s.st_name >= d.strsz || !std::memchr(strtab + s.st_name, 0, d.strsz - s.st_name)) return nullptr;
    return strtab + s.st_name;
  }

  // The value of symbol `i`: the object's own definition, else the host's function.
  bool resolve(uint64_t i, uint64_t& value) {
    if (i >= nsyms) return fail("relocation names symbol " + std::to_string(i) + " of " + std::to_string(nsyms));
    const Elf64_Sym& s = syms[i];
    if (s.st_shndx != SHN_UNDEF) return value = uint64_t(img.base_) + s.st_value, true;
    const char* name = nameOf(s);
    if (!name) return fail("a symbol name outside the string table");
    for (const HostSymbol& h : hostSymbols())
      if (std::strcmp(h.name, name) == 0) return value = uint64_t(h.address), true;
    if (ELF64_ST_BIND(s.st_info) == STB_WEAK) return value = 0, true;
    return fail(std::string("undefined symbol '") + name + "' (not among the C library functions the runtime offers)");
  }

  bool relocate(uint64_t table, uint64_t bytesLen) {
    const auto* r = this->table<Elf64_Rela>(table, bytesLen / sizeof(Elf64_Rela));
    if (bytesLen && !r) return fail("relocations outside the object, or misaligned");
    for (uint64_t k = 0; k < bytesLen / sizeof(Elf64_Rela); ++k) {
      uint32_t type = ELF64_R_TYPE(r[k].r_info);
      if (type == kRelNone) continue;
      auto* where = at(r[k].r_offset, 8);
      if (!where) return fail("relocation " + std::to_string(k) + " patches outside the object");
      uint64_t v = 0;
      if (type == kRelRelative) {
        v = uint64_t(img.base_) + uint64_t(r[k].r_addend);
      } else if (type == kRelAbs || type == kRelGlobDat || type == kRelJumpSlot) {
        if (!resolve(ELF64_R_SYM(r[k].r_info), v)) return false;
        v += uint64_t(r[k].r_addend);
      } else {
        return fail("relocation " + std::to_string(k) + " has type " + std::to_string(type) +
                    ", which kime's loader does not handle");
      }
      std::memcpy(where, &v, 8);
    }
    return true;
  }

  // Page protections: each page gets what its segments ask for; RELRO pages lose write.
  bool protect() {
    const uint64_t ps = pageSize();
    std::vector<int> prot((hi - lo) / ps, PROT_NONE);
    for (const Elf64_Phdr& p : ph) {
      if (p.p_type != PT_LOAD || p.p_memsz == 0) continue;
      int f =
          (p.p_flags & PF_R ? PROT_READ : 0) | (p.p_flags & PF_W ? PROT_WRITE : 0) | (p.p_flags & PF_X ? PROT_EXEC : 0);
      for (uint64_t a = pageDown(p.p_vaddr); a < p.p_vaddr + p.p_memsz; a += ps) prot[(a - lo) / ps] |= f;
    }
    for (const Elf64_Phdr& p : ph)
      if (p.p_type == PT_GNU_RELRO)  // as glibc does: the pages the region covers up to its last full one
        for (uint64_t a = std::max(lo, pageDown(p.p_vaddr)); a < std::min(hi, pageDown(p.p_vaddr + p.p_memsz)); a += ps)
          prot[(a - lo) / ps] &= ~PROT_WRITE;
    uint8_t* base = img.base_;
    for (size_t i = 0; i < prot.size();) {
      size_t j = i;
      while (j < prot.size() && prot[j] == prot[i]) ++j;
      if (mprotect(base + lo + i * ps, (j - i) * ps, prot[i]) != 0)
        return fail(std::string("mprotect: ") + std::strerror(errno));
      if (prot[i] & PROT_EXEC)
        __builtin___clear_cache(reinterpret_cast<char*>(base + lo + i * ps),
                                reinterpret_cast<char*>(base + lo + j * ps));
      i = j;
    }
    return true;
  }

  void collectExports() {
    for (uint64_t i = 1; i < nsyms; ++i) {
      const Elf64_Sym& s = syms[i];
      int bind = ELF64_ST_BIND(s.st_info);
      if (s.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
      if (const char* name = nameOf(s)) img.exports_.push_back({name, img.base_ + s.st_value});
    }
  }

  // The constructors in order, into `init`; the finalizers kept for the destructor, in the order
  // they must run.
  bool readInitFini(std::vector<void (*)()>& init) {
    auto functions = [&](uint64_t va, uint64_t n, std::vector<void (*)()>& out) -> bool {
      const auto* f = table<uint64_t>(va, n / 8);
      if (n && !f) return false;
      for (uint64_t k = 0; k < n / 8; ++k)
        if (f[k] != 0 && f[k] != UINT64_MAX) out.push_back(reinterpret_cast<void (*)()>(f[k]));
      return true;
    };
    if (d.init) init.push_back(reinterpret_cast<void (*)()>(img.base_ + d.init));
    if (!functions(d.initArray, d.initArraySz, init))
      return fail("constructor table outside the object, or misaligned");
    std::vector<void (*)()> fini;
    if (!functions(d.finiArray, d.finiArraySz, fini)) return fail("finalizer table outside the object, or misaligned");
    img.finalizers_.assign(fini.rbegin(), fini.rend());
    if (d.fini) img.finalizers_.push_back(reinterpret_cast<void (*)()>(img.base_ + d.fini));
    return true;
  }

  // Every step short of making the code executable and running it.
  bool prepare(std::vector<void (*)()>& init) {
    return readHeaders() && mapSegments() && readDynamic() && readSymbols() && relocate(d.rela, d.relasz) &&
           relocate(d.jmprel, d.pltrelsz) && readInitFini(init);
  }
};

std::unique_ptr<ElfImage> ElfImage::load(const uint8_t* bytes, size_t size, std::string& error) {
  std::unique_ptr<ElfImage> img(new ElfImage);
  Loader l(bytes, size, error, *img);
  std::vector<void (*)()> init;
  if (!l.prepare(init) || !l.protect()) return nullptr;
  l.collectExports();
  for (auto f : init) f();
  return img;
}

bool ElfImage::check(const uint8_t* bytes, size_t size, std::string& error) {
  ElfImage img;
  Loader l(bytes, size, error, img);
  std::vector<void (*)()> init;
  const bool ok = l.prepare(init);
  img.finalizers_.clear();  // nothing of the object runs
  return ok;
}

ElfImage::~ElfImage() {
  for (auto f : finalizers_) f();
  if (map_) munmap(map_, span_);
}

void* ElfImage::symbol(const std::string& name) const {
  for (const Export& e : exports_)
    if (e.name == name) return e.address;
  return nullptr;
}

}  // namespace kime
