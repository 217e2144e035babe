import { createApp } from 'vue';
import Composer from './Composer.vue';
import '../shared/style.css';

createApp(Composer).mount('#app');
