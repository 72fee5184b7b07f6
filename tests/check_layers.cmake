# layers.includes_only_go_down: every `#include "..."` in runtime/ and
# generated/ goes from its file's unit to the same unit, to the public
# headers, or to a unit below it that the table allows
# (docs/architecture.md, "Layers").  `#include <...>` is not read.
#
#   cmake -DSRC=<repository root> -P tests/check_layers.cmake
#
# It fails, listing every problem, on
#   - an include the table does not allow and that is not an exception,
#     naming the file, its line, the include, both units and what the
#     including unit may include;
#   - an exception that no longer occurs (or that the table now allows), so
#     the list below only shrinks;
#   - an include it cannot resolve, a file in no unit, and a table whose
#     allowed edges do not all go down (which would allow a cycle).
# and prints, pass or fail, the files read, the edges, the exceptions in use
# per reason, the include edges per unit pair and the cycles between units
# that only the exceptions close.
#
# Resolving an include: like the compiler, the including file's folder
# first, then runtime/, runtime/include/, generated/, generated/include/.
# Headers the build writes are in YG_BUILT_HEADERS.
cmake_minimum_required(VERSION 3.20)
if(NOT DEFINED SRC)
  message(FATAL_ERROR "usage: cmake -DSRC=<repository root> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
get_filename_component(SRC "${SRC}" ABSOLUTE)

# ---- units: a file's path from the repository root -> its unit ----
# First matching prefix wins, so the specific rules come first.
set(YG_UNIT_RULES
  runtime/include/=public            # the API, and the types everything shares
  generated/include/=public
  runtime/core/=core                 # tensors, storage, status, sizes, allocator, RNG
  runtime/cpu/=cpu                   # the CPU backend and its per-ISA loops
  generated/loops/=cpu
  generated/decls/=decls             # the per-op functions' declarations, from the YAML
  runtime/meta/=meta                 # what every device shares of a kernel: checks, result shapes, row geometry
  runtime/cuda/=cuda                 # the CUDA backend and its launchers
  generated/cuda/=cuda
  generated/kernels/=kernels         # kernels over the backends: generated pointwise,
  runtime/conv/=kernels              # the convolution dispatcher (native, oneDNN, cuDNN),
  runtime/composite/=kernels         # composites
  runtime/autograd/=autograd         # the engine and the generated backward nodes
  generated/nodes/=autograd
  generated/api/=ops                 # the public yg_<op> wrappers and the op registry
  generated/registry.c=ops
  generated/generated_int.h=ops
  generated/op_ids.h=ops
  runtime/jit/frontend/=jit.tracer   # yg_trace
  generated/boxed/=jit.ir            # an op called from a graph node (jit/ir/boxing.h)
  runtime/jit/passes/=jit.passes     # graph to graph: passes, autodiff, graph derivatives
  runtime/jit/autodiff/=jit.passes
  generated/graph_grad/=jit.passes
  runtime/jit/fuser/=jit.fuser       # the pointwise fuser
  generated/fuser/=jit.fuser
  runtime/jit/exec/=jit.exec         # running graphs: interpreter, executor, differentiable graphs
  runtime/jit/ir/=jit.ir             # IR, kinds, text, parser, printer, dumps
  runtime/onnx/=onnx
  generated/onnx/=onnx
  runtime/distributed/=distributed
  runtime/optim/=optim
  runtime/io/=io)                    # files: safetensors

# Headers the build writes, with the path they would have in the tree.
set(YG_BUILT_HEADERS
  yagrad/version.h=runtime/include/yagrad/version.h   # configure_file of version.h.in
  onnx/onnx.pb-c.h=runtime/onnx/onnx.pb-c.h)          # protoc-c (cmake/Onnx.cmake)

# ---- levels, bottom to top ----
# A unit may only be allowed units on a lower level; units on one level
# (cpu and cuda; onnx, distributed, optim and io)
# never include each other.  Checked below: it makes the table acyclic.
set(YG_LEVELS
  public
  core
  decls
  meta
  cpu,cuda
  kernels
  autograd
  ops
  jit.ir
  jit.tracer
  jit.passes
  jit.fuser
  jit.exec
  onnx,distributed,optim,io)

# ---- allowed edges: what each unit may include besides itself ----
# public: the installed headers include only each other.
set(YG_ALLOW_public "")
# core: the tensor and its services, over the public types only.
set(YG_ALLOW_core public)
# decls: the declarations of the handwritten per-op functions (meta,
# device implementations, composites) that gen writes from the YAML, for
# the files that define and call them.
set(YG_ALLOW_decls core public)
# meta: the device-neutral half of the kernels (the structured ops' meta
# functions, argument checks both devices share, the row geometry of
# reductions), over core.
set(YG_ALLOW_meta decls core public)
# cpu, cuda: backends over core; neither knows the other.
set(YG_ALLOW_cpu meta decls core public)
set(YG_ALLOW_cuda meta decls core public)
# kernels: pick a backend per device (cuDNN, conv/cudnn.c, is the CUDA
# backend's).
set(YG_ALLOW_kernels cpu cuda meta decls core public)
# autograd: the engine accumulates and seeds gradients with the
# device-independent kernels (yg__kernel_copy_/fill_/zero_ of cpu/cpu.h, the
# generated add of kernels/arithmetic.h); it never touches a backend's
# device code, so no cuda.
set(YG_ALLOW_autograd kernels cpu meta decls core public)
# ops: a wrapper checks, dispatches to a kernel or composite and records
# the backward node: everything below.
set(YG_ALLOW_ops autograd kernels cpu cuda meta decls core public)
# jit.*: everything below ops (jit/ir/ir.h interns kinds from the op registry,
# generated_int.h; diff_graph.c makes an autograd node; the fuser emits
# vecmath calls and launches on CUDA), and inside jit only downwards:
set(YG_JIT_BELOW ops autograd kernels cpu cuda meta decls core public)
# jit.ir (jit/ir/): graphs, kinds, text, and boxing: an op called from a
# graph node's inputs and attributes.  The generated boxed functions take a
# yg_ir_node and only jit calls them (the interpreter, constant
# propagation), so they are jit's, not ops'.  Nothing else of jit.
set(YG_ALLOW_jit.ir ${YG_JIT_BELOW})
# jit.tracer (jit/frontend/): records op calls as IR, as core's op-call
# observer.
set(YG_ALLOW_jit.tracer jit.ir ${YG_JIT_BELOW})
# jit.passes (jit/passes/, jit/autodiff/): constant propagation and
# decomposition run ops through boxing; autodiff builds backward graphs.
set(YG_ALLOW_jit.passes jit.ir ${YG_JIT_BELOW})
# jit.fuser: its fusion pass is a pass.
set(YG_ALLOW_jit.fuser jit.passes jit.ir ${YG_JIT_BELOW})
# jit.exec (jit/exec/): runs graphs, their fusion groups and
# differentiable subgraphs.
set(YG_ALLOW_jit.exec jit.fuser jit.passes jit.tracer jit.ir ${YG_JIT_BELOW})
# onnx, distributed, optim, io: users of the library, everything below;
# none includes another.
set(YG_TOP_BELOW jit.exec jit.fuser jit.passes jit.tracer jit.ir ${YG_JIT_BELOW})
set(YG_ALLOW_onnx ${YG_TOP_BELOW})
set(YG_ALLOW_distributed ${YG_TOP_BELOW})
set(YG_ALLOW_optim ${YG_TOP_BELOW})
set(YG_ALLOW_io ${YG_TOP_BELOW})

# ---- exceptions: includes allowed to go up for a while ----
# Exact "<including file>|<included path>" pairs, each group given with
# yg_exceptions(<the change that removes them> <pairs...>) below the
# function.  None is left: every include goes down.  A restructuring that
# must land in steps may add some again; an exception that no longer
# occurs fails the test, so the list only shrinks.
set(YG_EXCEPTIONS "")
set(YG_EXCEPTION_GROUP "")
set(YG_REASONS "")
function(yg_exceptions reason)
  if(reason MATCHES ";")
    message(FATAL_ERROR "a reason may not contain ';' (a CMake list separator): ${reason}")
  endif()
  list(LENGTH YG_REASONS group)
  list(APPEND YG_REASONS "${reason}")
  foreach(pair ${ARGN})
    list(APPEND YG_EXCEPTIONS "${pair}")
    list(APPEND YG_EXCEPTION_GROUP ${group})
  endforeach()
  set(YG_REASONS "${YG_REASONS}" PARENT_SCOPE)
  set(YG_EXCEPTIONS "${YG_EXCEPTIONS}" PARENT_SCOPE)
  set(YG_EXCEPTION_GROUP "${YG_EXCEPTION_GROUP}" PARENT_SCOPE)
endfunction()

# ---------------------------------------------------------------------------
set(problems "")
set(n_problems 0)
function(yg_problem)  # the arguments, concatenated (';' kept)
  set(text "")
  math(EXPR last "${ARGC} - 1")
  foreach(i RANGE ${last})
    string(APPEND text "${ARGV${i}}")
  endforeach()
  set(problems "${problems}${text}\n" PARENT_SCOPE)
  math(EXPR n "${n_problems} + 1")
  set(n_problems ${n} PARENT_SCOPE)
endfunction()

# yg_unit_of(<path from SRC> <out var>): its unit, or "" outside every rule.
function(yg_unit_of path out)
  if(DEFINED "YG_UNIT_OF_${path}")
    set(${out} "${YG_UNIT_OF_${path}}" PARENT_SCOPE)
    return()
  endif()
  set(unit "")
  foreach(rule ${YG_UNIT_RULES})
    string(FIND "${rule}" "=" eq)
    string(SUBSTRING "${rule}" 0 ${eq} prefix)
    string(FIND "${path}" "${prefix}" at)
    if(at EQUAL 0)
      math(EXPR eq "${eq} + 1")
      string(SUBSTRING "${rule}" ${eq} -1 unit)
      break()
    endif()
  endforeach()
  set("YG_UNIT_OF_${path}" "${unit}" PARENT_SCOPE)
  set(${out} "${unit}" PARENT_SCOPE)
endfunction()

# The line number of `text` in file f (only for messages).
function(yg_line_of f text out)
  file(READ "${SRC}/${f}" content)
  string(FIND "${content}" "${text}" at)
  set(line "?")
  if(at GREATER -1)
    string(SUBSTRING "${content}" 0 ${at} before)
    string(REGEX REPLACE "[^\n]" "" newlines "${before}")
    string(LENGTH "${newlines}" n)
    math(EXPR line "${n} + 1")
  endif()
  set(${out} ${line} PARENT_SCOPE)
endfunction()

# ---- the table goes down ----
set(YG_UNITS "")
set(level 0)
foreach(group ${YG_LEVELS})
  string(REPLACE "," ";" members "${group}")
  foreach(u ${members})
    set(YG_LEVEL_${u} ${level})
    list(APPEND YG_UNITS ${u})
  endforeach()
  math(EXPR level "${level} + 1")
endforeach()
foreach(u ${YG_UNITS})
  if(NOT DEFINED YG_ALLOW_${u})
    yg_problem("table: unit ${u} has no YG_ALLOW_${u} row")
    continue()
  endif()
  foreach(v ${YG_ALLOW_${u}})
    if(NOT DEFINED YG_LEVEL_${v})
      yg_problem("table: ${u} may include ${v}, which is no unit of YG_LEVELS")
    elseif(NOT YG_LEVEL_${v} LESS YG_LEVEL_${u})
      yg_problem("table: ${u} may include ${v}, which is not on a lower level: "
                 "the allowed edges must all go down, or they could form a cycle")
    endif()
  endforeach()
endforeach()
foreach(rule ${YG_UNIT_RULES})
  string(REGEX REPLACE "^[^=]*=" "" u "${rule}")
  if(NOT DEFINED YG_LEVEL_${u})
    yg_problem("table: ${rule} names unit ${u}, which is in no level of YG_LEVELS")
  endif()
endforeach()

# ---- read the includes ----
set(globs "")
foreach(top runtime generated)
  foreach(ext c h cu cuh)
    list(APPEND globs "${SRC}/${top}/*.${ext}")
  endforeach()
endforeach()
file(GLOB_RECURSE files RELATIVE "${SRC}" ${globs})
list(SORT files)
list(LENGTH files n_files)

set(n_edges 0)
set(n_excepted 0)
set(pairs "")        # "from/to" unit pairs met, including a unit with itself
set(used "")         # exceptions met
set(excepted_pairs "")
set(graph_edges "")  # "from/to" between different units (allowed or excepted)
foreach(f ${files})
  yg_unit_of("${f}" from)
  if(from STREQUAL "")
    yg_problem("${f}: in no unit; add a rule to YG_UNIT_RULES")
    continue()
  endif()
  get_filename_component(dir "${f}" DIRECTORY)
  file(STRINGS "${SRC}/${f}" lines ENCODING UTF-8
       REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
  foreach(line ${lines})
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
    math(EXPR n_edges "${n_edges} + 1")
    set(target "")
    foreach(base "${dir}" runtime runtime/include generated generated/include)
      cmake_path(SET candidate NORMALIZE "${base}/${inc}")
      if(EXISTS "${SRC}/${candidate}" AND NOT IS_DIRECTORY "${SRC}/${candidate}")
        set(target "${candidate}")
        break()
      endif()
    endforeach()
    if(target STREQUAL "")
      foreach(built ${YG_BUILT_HEADERS})
        if(built MATCHES "^([^=]*)=(.*)$" AND CMAKE_MATCH_1 STREQUAL inc)
          set(target "${CMAKE_MATCH_2}")
        endif()
      endforeach()
    endif()
    if(target STREQUAL "")
      yg_line_of("${f}" "${line}" ln)
      yg_problem("${f}:${ln}: #include \"${inc}\" is no file of ${dir}/, runtime/, "
                 "runtime/include/, generated/ or generated/include/ (a header the build "
                 "writes goes in YG_BUILT_HEADERS)")
      continue()
    endif()
    yg_unit_of("${target}" to)
    if(to STREQUAL "")
      yg_problem("${f}: #include \"${inc}\" is ${target}, in no unit; add a rule to YG_UNIT_RULES")
      continue()
    endif()

    set(pair "${from}/${to}")
    if(NOT pair IN_LIST pairs)
      list(APPEND pairs "${pair}")
      set(n_pair_${pair} 0)
      set(n_pair_excepted_${pair} 0)
    endif()
    math(EXPR n_pair_${pair} "${n_pair_${pair}} + 1")

    set(key "${f}|${inc}")
    if(to STREQUAL from OR to STREQUAL "public" OR to IN_LIST YG_ALLOW_${from})
      if(key IN_LIST YG_EXCEPTIONS)
        yg_problem("stale exception: ${key} is allowed now (${from} -> ${to}); "
                   "delete it from YG_EXCEPTIONS")
        list(APPEND used "${key}")
      endif()
      if(NOT to STREQUAL from)
        list(APPEND graph_edges "${pair}")
      endif()
    elseif(key IN_LIST YG_EXCEPTIONS)
      list(APPEND used "${key}")
      math(EXPR n_excepted "${n_excepted} + 1")
      math(EXPR n_pair_excepted_${pair} "${n_pair_excepted_${pair}} + 1")
      list(APPEND graph_edges "${pair}")
      list(APPEND excepted_pairs "${pair}")
    else()
      yg_line_of("${f}" "${line}" ln)
      string(REPLACE ";" ", " may "${YG_ALLOW_${from}}")
      if(may STREQUAL "")
        set(may "nothing")
      endif()
      yg_problem("${f}:${ln}: #include \"${inc}\" goes from ${from} to ${to} (${target}), "
                 "which ${from} may not include\n    ${from} may include: ${may} "
                 "(and ${from} itself); see docs/architecture.md, \"Layers\"")
    endif()
  endforeach()
endforeach()

# ---- stale exceptions ----
list(LENGTH YG_EXCEPTIONS n_exceptions)
set(i 0)
foreach(key ${YG_EXCEPTIONS})
  list(GET YG_EXCEPTION_GROUP ${i} g)
  list(GET YG_REASONS ${g} reason)
  if(NOT key IN_LIST used)
    yg_problem("stale exception: ${key} no longer occurs (${reason}); delete it from YG_EXCEPTIONS")
  endif()
  list(FIND YG_EXCEPTIONS "${key}" first)
  if(NOT first EQUAL i)
    yg_problem("exception ${key} is listed twice")
  endif()
  math(EXPR i "${i} + 1")
endforeach()

# ---- summary ----
list(REMOVE_DUPLICATES used)
list(LENGTH used n_used)
string(CONCAT summary "layers: ${n_files} files read, ${n_edges} include edges, "
       "${n_excepted} of them excepted (${n_used} of ${n_exceptions} exceptions in use)\n")
string(APPEND summary "exceptions per reason:\n")
set(g 0)
foreach(reason ${YG_REASONS})
  set(n 0)
  set(i 0)
  foreach(key ${YG_EXCEPTIONS})
    list(GET YG_EXCEPTION_GROUP ${i} kg)
    if(kg EQUAL g AND key IN_LIST used)
      math(EXPR n "${n} + 1")
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
  set(pad "  ")
  if(n LESS 10)
    set(pad "   ")
  endif()
  string(APPEND summary "${pad}${n}  ${reason}\n")
  math(EXPR g "${g} + 1")
endforeach()
string(APPEND summary "include edges per unit pair (from -> to: edges, excepted):\n")
list(SORT pairs)
foreach(pair ${pairs})
  string(REPLACE "/" " -> " shown "${pair}")
  set(note "")
  if(n_pair_excepted_${pair} GREATER 0)
    set(note ", ${n_pair_excepted_${pair}} excepted")
  endif()
  string(APPEND summary "  ${shown}: ${n_pair_${pair}}${note}\n")
endforeach()

# ---- cycles between units ----
# The allowed edges go down (checked above), so every cycle uses an
# excepted edge; these are reported, and go with their exceptions.
list(REMOVE_DUPLICATES graph_edges)
list(REMOVE_DUPLICATES excepted_pairs)
set(cycles "")
foreach(pair ${excepted_pairs})
  string(REPLACE "/" ";" ends "${pair}")
  list(GET ends 0 a)
  list(GET ends 1 b)
  # breadth-first from b back to a over the edges met
  set(seen ${b})
  set(queue ${b})
  set(prev_${b} "")
  set(found OFF)
  while(queue AND NOT found)
    list(POP_FRONT queue u)
    foreach(e ${graph_edges})
      if(e MATCHES "^([^/]*)/(.*)$" AND CMAKE_MATCH_1 STREQUAL u)
        set(v ${CMAKE_MATCH_2})
        if(NOT v IN_LIST seen)
          list(APPEND seen ${v})
          list(APPEND queue ${v})
          set(prev_${v} ${u})
          if(v STREQUAL a)
            set(found ON)
            break()
          endif()
        endif()
      endif()
    endforeach()
  endwhile()
  if(found)
    set(path ${a})
    set(u ${a})
    while(NOT u STREQUAL b)
      set(u ${prev_${u}})
      list(PREPEND path ${u})
    endwhile()
    list(PREPEND path ${a})
    string(REPLACE ";" " -> " path "${path}")
    string(APPEND cycles "  ${path}\n")
  endif()
  foreach(v ${seen})
    unset(prev_${v})
  endforeach()
endforeach()
if(cycles STREQUAL "")
  string(APPEND summary "no cycles between units\n")
else()
  string(APPEND summary "cycles between units, each closed by an excepted edge (the first):\n${cycles}")
endif()
message(STATUS "${summary}")

if(n_problems GREATER 0)
  # NOTICE prints the lines as they are (FATAL_ERROR would rewrap them).
  message(NOTICE "layering: ${n_problems} problem(s):\n${problems}")
  message(FATAL_ERROR "layering: ${n_problems} problem(s), listed above")
endif()
message(STATUS "layering: every include goes down or is a listed exception")
