// n8n loads the files its package.json's `n8n` section names; this entry point exists for `require` only.
module.exports = {};
