import './api.js';
