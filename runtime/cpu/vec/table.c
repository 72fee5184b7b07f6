/*
 * table.c - this level's yg_vec_kernels table (kernels.h): compiled once
 * per CPU capability like the kernels it points to.
 */
#include "cpu/vec/kernels.h"

const yg_vec_kernels YG_ISA_NAME(yg__vec_kernels) = {
    .softmax = {YG_ISA_NAME(yg__softmax_f32), YG_ISA_NAME(yg__softmax_f64)},
    .softmax_backward = {YG_ISA_NAME(yg__softmax_backward_f32),
                         YG_ISA_NAME(yg__softmax_backward_f64)},
    .norm = &YG_ISA_NAME(yg__norm_loops),
    .sgd_step = {YG_ISA_NAME(yg__sgd_step_f32), YG_ISA_NAME(yg__sgd_step_f64)},
    .adam_step = {YG_ISA_NAME(yg__adam_step_f32), YG_ISA_NAME(yg__adam_step_f64)},
    .sum_squares = {YG_ISA_NAME(yg__sum_squares_f32), YG_ISA_NAME(yg__sum_squares_f64)},
    .scale = {YG_ISA_NAME(yg__scale_f32), YG_ISA_NAME(yg__scale_f64)},
    .lstm_gates = {YG_ISA_NAME(yg__lstm_gates_f32), YG_ISA_NAME(yg__lstm_gates_f64)},
    .lstm_gates_backward = {YG_ISA_NAME(yg__lstm_gates_backward_f32),
                            YG_ISA_NAME(yg__lstm_gates_backward_f64)},
    .max_pool = {YG_ISA_NAME(yg__max_pool_f32), YG_ISA_NAME(yg__max_pool_f64)},
    .depthwise_rows = {YG_ISA_NAME(yg__depthwise_rows_f32), YG_ISA_NAME(yg__depthwise_rows_f64)},
    .attention = &YG_ISA_NAME(yg__attention_loops),
};
