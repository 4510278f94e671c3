# A package named triton inside outer.mid (a namespace directory): TransformerEngine's
# transformer_engine/common/triton. `import triton` in it is still the language.
