// Fixed questions, matching the server's code actions.
export const EXPLAIN_QUESTION = 'Explain this code.';
export const FIX_QUESTION = 'Fix these diagnostics.';
